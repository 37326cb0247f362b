"""A deterministic hashing embedder (feature hashing of word n-grams) for fast tests.

Not a semantic model: rewordings that share most words land close, unrelated
text lands far. Never use it for a real store.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    default_threshold = 0.35
    max_batch = 2048

    def __init__(self, dims: int = 384) -> None:
        self.dims = dims
        self.model = f"hashing-v1-{dims}"
        self.calls = 0

    def _vector(self, text: str) -> list[float]:
        words = [w.lower() for w in _WORD.findall(text)]
        feats = words + [a + " " + b for a, b in zip(words, words[1:], strict=False)]
        vec = [0.0] * self.dims
        for f in feats:
            d = hashlib.blake2b(f.encode("utf-8"), digest_size=8).digest()
            idx = int.from_bytes(d[:4], "little") % self.dims
            sign = 1.0 if d[4] & 1 else -1.0
            vec[idx] += sign
        norm = math.sqrt(sum(x * x for x in vec))
        if norm == 0.0:
            vec[0] = 1.0
            return vec
        return [x / norm for x in vec]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        from worker import faults

        faults.check_poison(texts)  # test-only: MEMSIEVE_FAULT_POISON
        faults.check_crash(texts)  # test-only: MEMSIEVE_FAULT_CRASH
        self.calls += 1
        return [self._vector(t) for t in texts]

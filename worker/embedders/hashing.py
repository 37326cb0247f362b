"""A deterministic hashing embedder (feature hashing of word n-grams) for fast tests.

Not a semantic model: rewordings that share most words land close, unrelated
text lands far. Never use it for a real store.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

import numpy as np

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
        idx = np.empty(len(feats), dtype=np.int64)
        sign = np.empty(len(feats), dtype=np.float64)
        for i, f in enumerate(feats):
            d = hashlib.blake2b(f.encode("utf-8"), digest_size=8).digest()
            idx[i] = int.from_bytes(d[:4], "little") % self.dims
            sign[i] = 1.0 if d[4] & 1 else -1.0
        # Sums of +-1 and their squares are exact in float64: the vector does not depend
        # on the order of the additions.
        vec = np.zeros(self.dims, dtype=np.float64)
        np.add.at(vec, idx, sign)
        norm = math.sqrt(float(np.dot(vec, vec)))
        if norm == 0.0:
            vec[0] = 1.0
            return vec.tolist()
        return (vec / norm).tolist()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        return [self._vector(t) for t in texts]

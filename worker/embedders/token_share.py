"""The classifier judge's token vectors, shared between worker processes through Redis.

A live memory written by another worker process (or before a restart) reaches the judge
without its contextual token vectors: the process that embedded it kept them, this one did
not, and running it through MiniLM again is most of the classifier's cost over the guards
when that happens (docs/performance.md, `bench.judge_cost`). Each text's token vectors are
put here, in half precision (~23 KB for 30 tokens), for `MEMSIEVE_JUDGE_SHARE_TTL_S` (60 s:
two processes taking turns on a namespace, a restart; 0: off), and a process that misses a text in its own cache reads it here before it runs the
model. Half precision is what a process keeps for itself too (`MiniLMTokenEncoder.absorb`).

Redis trouble never fails a judgment: a failed read is a miss (the model runs), a failed
write is skipped.
"""

from __future__ import annotations

import hashlib
import logging
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
from memsieve import constants
from memsieve.embedders.local import TokenVectors

log = logging.getLogger("memsieve.embedders")

_HEAD = struct.Struct("<4sHH")  # magic, tokens, dims
_MAGIC = b"tv1\x00"


def dumps(tv: TokenVectors) -> bytes:
    """One text's token vectors as bytes: float16 vectors, word ids (-1: none), offsets."""
    n, dims = tv.vectors.shape
    ids = np.array([-1 if w is None else w for w in tv.word_ids], dtype="<i4")
    offsets = np.array(tv.offsets, dtype="<i4").reshape(n, 2)
    vecs = np.ascontiguousarray(tv.vectors, dtype="<f2")
    return _HEAD.pack(_MAGIC, n, dims) + vecs.tobytes() + ids.tobytes() + offsets.tobytes()


def loads(text: str, raw: bytes) -> TokenVectors | None:
    """The token vectors `dumps` wrote for `text`; None for bytes it did not write."""
    if len(raw) < _HEAD.size:
        return None
    magic, n, dims = _HEAD.unpack_from(raw)
    if magic != _MAGIC or len(raw) != _HEAD.size + n * dims * 2 + n * 4 + n * 8:
        return None
    at = _HEAD.size
    vecs = np.frombuffer(raw, "<f2", n * dims, at).reshape(n, dims).astype(np.float16)
    at += n * dims * 2
    ids = np.frombuffer(raw, "<i4", n, at).tolist()
    offsets = np.frombuffer(raw, "<i4", 2 * n, at + n * 4).reshape(n, 2).tolist()
    return TokenVectors(
        text,
        vecs,
        tuple(None if w < 0 else w for w in ids),
        tuple((a, b) for a, b in offsets),
    )


class RedisTokenShare:
    """Token vectors by text in Redis, for `ttl_s` seconds (see the module docstring)."""

    def __init__(self, client: Any, model: str, ttl_s: int) -> None:
        self.client = client
        self.model = model
        self.ttl_s = ttl_s
        self._warned = False

    def _key(self, text: str) -> str:
        return constants.tokens_key(self.model, hashlib.sha256(text.encode("utf-8")).hexdigest())

    def get(self, texts: Sequence[str]) -> list[TokenVectors | None]:
        """The shared token vectors of each text (stripped, as tokenized), None if absent."""
        if not texts:
            return []
        try:
            raws = self.client.mget([self._key(t) for t in texts])
        except Exception as exc:  # noqa: BLE001 - a miss: the model runs instead
            self._warn("read", exc)
            return [None] * len(texts)
        return [None if r is None else loads(t, r) for t, r in zip(texts, raws, strict=True)]

    def put(self, tvs: Sequence[TokenVectors]) -> None:
        """Share these texts' token vectors (half precision) for `ttl_s` seconds."""
        if not tvs:
            return
        try:
            pipe = self.client.pipeline(transaction=False)
            for tv in tvs:
                pipe.set(self._key(tv.text), dumps(tv), ex=self.ttl_s)
            pipe.execute()
        except Exception as exc:  # noqa: BLE001 - not shared: another process computes it
            self._warn("write", exc)

    def _warn(self, what: str, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            log.warning("token share %s failed (%s): the judge runs the model instead", what, exc)

"""The classifier judge's token vectors, shared between worker processes through Redis.

A live memory written by another worker process (or before a restart) reaches the judge
without its contextual token vectors: the process that embedded it kept them, this one did
not, and running it through MiniLM again is most of the classifier's cost over the guards
when that happens (docs/performance.md, `bench.judge_cost`). Each text's token vectors are
put here, in half precision (~46 KB for 30 tokens: the last layer and the middle one), for
`MEMSIEVE_JUDGE_SHARE_TTL_S` (60 s: two processes taking turns on a namespace, a restart; 0:
off), and a process that misses a text in its own cache reads it here before it runs the
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

_HEAD = struct.Struct("<4sHHB")  # magic, tokens, dims, layers (1: no middle layer)
# tv2: the middle layer's vectors follow the last layer's (tv1 had the last layer only).
_MAGIC = b"tv2\x00"


def dumps(tv: TokenVectors) -> bytes:
    """One text's token vectors as bytes: float16 vectors (the last layer's, then the middle
    layer's where the pass gave them), word ids (-1: none), offsets."""
    n, dims = tv.vectors.shape
    ids = np.array([-1 if w is None else w for w in tv.word_ids], dtype="<i4")
    offsets = np.array(tv.offsets, dtype="<i4").reshape(n, 2)
    layers = [tv.vectors] if tv.mid is None else [tv.vectors, tv.mid]
    vecs = b"".join(np.ascontiguousarray(v, dtype="<f2").tobytes() for v in layers)
    head = _HEAD.pack(_MAGIC, n, dims, len(layers))
    return head + vecs + ids.tobytes() + offsets.tobytes()


def loads(text: str, raw: bytes) -> TokenVectors | None:
    """The token vectors `dumps` wrote for `text`; None for bytes it did not write."""
    if len(raw) < _HEAD.size:
        return None
    magic, n, dims, layers = _HEAD.unpack_from(raw)
    size = _HEAD.size + layers * n * dims * 2 + n * 4 + n * 8
    if magic != _MAGIC or layers not in (1, 2) or len(raw) != size:
        return None
    at = _HEAD.size
    vecs = [
        np.frombuffer(raw, "<f2", n * dims, at + k * n * dims * 2)
        .reshape(n, dims)
        .astype(np.float16)
        for k in range(layers)
    ]
    at += layers * n * dims * 2
    ids = np.frombuffer(raw, "<i4", n, at).tolist()
    offsets = np.frombuffer(raw, "<i4", 2 * n, at + n * 4).reshape(n, 2).tolist()
    return TokenVectors(
        text,
        vecs[0],
        tuple(None if w < 0 else w for w in ids),
        tuple((a, b) for a, b in offsets),
        vecs[1] if layers == 2 else None,
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

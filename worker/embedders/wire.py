"""An /v1/embeddings answer, decoded straight into one float32 matrix.

The `openai` client parses an answer into pydantic models: a list of Python floats per
vector, each number validated on its own (for 1,536-d vectors that was 78 % of a worker's
CPU when a server answered in floats). `decode` reads the raw body instead:

- base64 (what OpenAI sends when asked, and what we ask for): one `np.frombuffer` per
  vector over the decoded bytes, little-endian float32;
- JSON floats (what many OpenAI-compatible servers send whatever was asked): one orjson
  parse of the body and one `np.array` over all vectors, no pydantic model per number.
  `python -m bench.openai_decode` (256 vectors of 1,536 d per answer, same body, same
  process): 30x less CPU than the client's own parsing for a float answer, 3x for
  base64. orjson still makes a Python float per number, briefly; the parsers that make
  none that we could measure (`np.fromstring(sep=",")`, pandas' C reader) were no faster
  here, so the simplest robust one stays.

Either way the rows come back ordered by their `index`, and an answer that does not hold
exactly one vector of `dims` numbers per input is an error, never a silent mismatch.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import numpy as np
import orjson
from memsieve import errors
from memsieve.embedders.batching import EmbedderRefused

F32 = np.dtype("<f4")


class MalformedAnswer(errors.TransientError):
    """The server's answer is not a well-formed embeddings list (retried: proxies garble)."""


def decode(body: bytes, n: int, dims: int, model: str = "") -> np.ndarray:
    """The (n, dims) float32 matrix of an embeddings answer, rows in input order.

    Raises MalformedAnswer for a body that is not an embeddings list of n entries, and
    EmbedderRefused(reason="dims_mismatch") when the vectors are not `dims` long.
    """
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise MalformedAnswer(f"embeddings answer is not JSON: {exc}") from None
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise MalformedAnswer("embeddings answer holds no `data` list")
    if len(data) != n:
        raise MalformedAnswer(f"API returned {len(data)} vectors for {n} texts")
    order = np.empty(n, dtype=np.intp)
    b64: list[bytes] = []
    floats: list[Any] = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or type(item.get("index")) is not int:
            raise MalformedAnswer(f"data[{i}] has no integer index")
        order[i] = item["index"]
        emb = item.get("embedding")
        if isinstance(emb, str):
            try:
                b64.append(base64.b64decode(emb, validate=True))
            except (binascii.Error, ValueError):
                raise MalformedAnswer(f"data[{i}].embedding is not base64") from None
        elif isinstance(emb, list):
            floats.append(emb)
        else:
            raise MalformedAnswer(f"data[{i}].embedding is neither base64 nor a list")
    if b64 and floats:
        raise MalformedAnswer("embeddings answer mixes base64 and float vectors")
    if not np.array_equal(np.sort(order), np.arange(n)):
        raise MalformedAnswer("embeddings answer indices are not 0..n-1")
    lengths = {len(b) for b in b64} if b64 else {len(f) for f in floats}
    want = dims * F32.itemsize if b64 else dims
    if lengths != {want}:
        got = sorted(lengths)[0] // (F32.itemsize if b64 else 1)
        raise EmbedderRefused(
            f"{model or 'the embedder'} returned {got}-d vectors, configured for {dims}",
            reason="dims_mismatch",
        )
    if b64:
        matrix = np.frombuffer(b"".join(b64), dtype=F32).reshape(n, dims)
    else:
        try:
            # A number past float32's range becomes inf (refused just below), not a warning.
            with np.errstate(over="ignore"):
                matrix = np.array(floats, dtype=np.float32)
        except (TypeError, ValueError):
            raise MalformedAnswer("embeddings answer holds a non-number") from None
    if not np.isfinite(matrix).all():
        raise MalformedAnswer("embeddings answer holds a non-finite number")
    out = np.empty((n, dims), dtype=np.float32)
    out[order] = matrix
    return out

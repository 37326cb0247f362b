"""memsieve.embedders.wire: embeddings answers decoded into one float32 matrix."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from memsieve.embedders import wire
from memsieve.embedders.batching import EmbedderRefused

RNG = np.random.default_rng(7)


def answer(vectors: np.ndarray, fmt: str, order: list[int] | None = None, **extra: object) -> bytes:
    order = list(range(len(vectors))) if order is None else order
    data = []
    for i in order:
        v = vectors[i]
        emb: object = base64.b64encode(v.astype("<f4").tobytes()).decode()
        if fmt == "float":
            emb = [float(x) for x in v]
        data.append({"object": "embedding", "index": i, "embedding": emb, **extra})
    return json.dumps({"object": "list", "data": data, "model": "m"}).encode()


@pytest.mark.parametrize("fmt", ["base64", "float"])
def test_rows_come_back_in_index_order_bit_exact(fmt: str) -> None:
    vecs = RNG.standard_normal((5, 16)).astype(np.float32)
    out = wire.decode(answer(vecs, fmt, order=[3, 0, 4, 1, 2]), 5, 16)
    assert out.dtype == np.float32 and out.shape == (5, 16)
    assert np.array_equal(out, vecs)


def test_float_answer_with_other_layout_and_exponents() -> None:
    # Whitespace, keys in another order, exponents: what other servers send.
    body = b"""{ "data" : [ {"embedding" : [ 1e-05 , -2.5E+00, 3 ],
                 "index": 1},
               {"index":0, "object":"embedding", "embedding":[0.5,-0.25,0]} ],
               "usage": {"total_tokens": 3}}"""
    out = wire.decode(body, 2, 3)
    assert out.tolist() == [[0.5, -0.25, 0.0], [np.float32(1e-05), -2.5, 3.0]]


@pytest.mark.parametrize("fmt", ["base64", "float"])
def test_wrong_dimensions_are_refused(fmt: str) -> None:
    vecs = RNG.standard_normal((2, 8)).astype(np.float32)
    with pytest.raises(EmbedderRefused, match="returned 8-d vectors, configured for 16") as e:
        wire.decode(answer(vecs, fmt), 2, 16, "m")
    assert e.value.reason == "dims_mismatch"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"data": [{"index": 0, "embedding": [1.0, 2.0]}', "not JSON"),
        (b'{"error": "nope"}', "no `data` list"),
        (b'{"data": [{"index": 0, "embedding": [1.0, 2.0]}]}', "1 vectors for 2 texts"),
        (b'{"data": [{"index": 0, "embedding": [1, 2]}, {"embedding": [1, 2]}]}', "no integer"),
        (
            b'{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 0, "embedding": [1, 2]}]}',
            "indices are not 0..n-1",
        ),
        (
            b'{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": "AACAPwAAAEA="}]}',
            "mixes base64 and float",
        ),
        (
            b'{"data": [{"index": 0, "embedding": "***"}, {"index": 1, "embedding": "***"}]}',
            "not base64",
        ),
        (
            b'{"data": [{"index": 0, "embedding": [1, "x"]}, {"index": 1, "embedding": [1, 2]}]}',
            "non-number",
        ),
        (
            b'{"data": [{"index": 0, "embedding": [1, 1e39]}, {"index": 1, "embedding": [1, 2]}]}',
            "non-finite",
        ),
        (
            b'{"data": [{"index": 0, "embedding": null}, {"index": 1, "embedding": [1, 2]}]}',
            "neither base64 nor a list",
        ),
    ],
)
def test_malformed_answers_are_transient_errors(body: bytes, message: str) -> None:
    with pytest.raises(wire.MalformedAnswer, match=message):
        wire.decode(body, 2, 2)


def test_malformed_answer_is_transient() -> None:
    from memsieve import errors

    assert issubclass(wire.MalformedAnswer, errors.TransientError)

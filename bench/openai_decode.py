"""CPU per embeddings answer: the `openai` client's own parsing vs memsieve.embedders.wire.

    . .venv/bin/activate && python -m bench.openai_decode [--inputs 256] [--repeats 5]

The same prebuilt answer body (--inputs vectors of 1,536 float32s, base64 or JSON floats
written as a server writes float32s) is served from memory by an httpx MockTransport, so
only the client side is timed: the real `openai` client, its `embeddings.create` parsing
the answer into pydantic models (then the vectors into one numpy matrix, as a caller
needs them), against `with_raw_response` + `wire.decode` (what memsieve does). Alongside,
the parsers we measured for float answers: json + numpy, np.fromstring, orjson + numpy.
Medians of --repeats, same process, same body.
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import httpx2 as httpx
import numpy as np
import openai
import orjson
from memsieve.embedders import wire


def body(n: int, dims: int, fmt: str) -> bytes:
    rng = np.random.default_rng(5)
    vecs = rng.standard_normal((n, dims)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    data = [
        {
            "object": "embedding",
            "index": i,
            "embedding": base64.b64encode(v.tobytes()).decode() if fmt == "base64" else v,
        }
        for i, v in enumerate(vecs)
    ]
    payload = {"object": "list", "data": data, "model": "m", "usage": {"total_tokens": 1}}
    return orjson.dumps(payload, option=orjson.OPT_SERIALIZE_NUMPY)


def client_for(raw: bytes) -> openai.OpenAI:
    transport = httpx.MockTransport(
        lambda request: httpx.Response(
            200, content=raw, headers={"content-type": "application/json"}
        )
    )
    return openai.OpenAI(
        api_key="sk-x", base_url="http://fake/v1", http_client=httpx.Client(transport=transport)
    )


def timed(fn: Callable[[], Any], repeats: int) -> float:
    fn()
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--inputs", type=int, default=256)
    ap.add_argument("--dims", type=int, default=1536)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    n, dims = args.inputs, args.dims
    texts = ["x"] * n
    print(f"{n} vectors of {dims} float32 per answer; ms per answer, median of {args.repeats}")
    print("| answer | openai client parse (+ np.array) | memsieve wire.decode | ratio |")
    print("| --- | --- | --- | --- |")
    for fmt in ("base64", "float"):
        raw = body(n, dims, fmt)
        client = client_for(raw)

        def sdk(client: openai.OpenAI = client) -> np.ndarray:
            # As a user writes it: the client's default (it asks for base64 itself when no
            # encoding_format is given, and decodes to lists of Python floats).
            resp = client.embeddings.create(input=texts, model="m")
            return np.array([d.embedding for d in resp.data], dtype=np.float32)

        def ours(client: openai.OpenAI = client) -> np.ndarray:
            r = client.embeddings.with_raw_response.create(
                input=texts, model="m", encoding_format="base64"
            )
            return wire.decode(r.content, n, dims)

        assert np.array_equal(sdk(), ours())
        a, b = timed(sdk, args.repeats), timed(ours, args.repeats)
        print(f"| {fmt} | {a * 1e3:.1f} ms | {b * 1e3:.1f} ms | {a / b:.1f}x |")

    raw = body(n, dims, "float")
    spans = [
        json.dumps([float(x) for x in d["embedding"]])[1:-1] for d in orjson.loads(raw)["data"]
    ]

    def fromstring() -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return np.vstack([np.fromstring(s, dtype=np.float32, sep=",") for s in spans])

    parsers = {
        "json.loads + np.array": lambda: np.array(
            [d["embedding"] for d in json.loads(raw)["data"]], dtype=np.float32
        ),
        "np.fromstring per vector (spans pre-cut)": fromstring,
        "orjson.loads + np.array (wire.decode)": lambda: wire.decode(raw, n, dims),
    }
    print()
    print("| float answer parser | ms per answer |")
    print("| --- | --- |")
    for name, fn in parsers.items():
        print(f"| {name} | {timed(fn, args.repeats) * 1e3:.1f} ms |")


if __name__ == "__main__":
    main()

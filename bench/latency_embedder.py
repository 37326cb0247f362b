"""Benchmarks only: the hashing embedder behind a simulated provider round trip.

Not in the package: bench workers run `python -m bench.worker`, which swaps this embedder
in when MEMSIEVE_FAKE_EMBED_LATENCY_MS is set (see `install`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from memsieve.embedders.hashing import HashingEmbedder

REQUESTS_KEY = "memsieve:bench:embed-requests"
TEXTS_KEY = "memsieve:bench:embed-texts"
LATENCY_ENV = "MEMSIEVE_FAKE_EMBED_LATENCY_MS"
COUNT_ENV = "MEMSIEVE_FAKE_EMBED_COUNT"


class LatencyEmbedder(HashingEmbedder):
    """Every embed() call (one provider request, whatever its batch size) sleeps
    `latency_ms` first, as an OpenAI request would; the vectors stay deterministic. With a
    Redis URL, requests and texts are counted in Redis so a benchmark can read them across
    worker processes."""

    def __init__(self, dims: int, latency_ms: float, count_url: str | None = None) -> None:
        super().__init__(dims)
        self.latency_s = latency_ms / 1000.0
        self._counter = None
        if count_url:
            import redis

            self._counter = redis.Redis.from_url(count_url)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        time.sleep(self.latency_s)
        if self._counter is not None:
            self._counter.incr(REQUESTS_KEY)
            self._counter.incrby(TEXTS_KEY, len(texts))
        return super().embed(texts)


def install(env: Mapping[str, str] | None = None) -> bool:
    """With MEMSIEVE_FAKE_EMBED_LATENCY_MS, the hashing embedder becomes a LatencyEmbedder
    in this process (and the worker children it forks)."""
    env = os.environ if env is None else env
    latency = env.get(LATENCY_ENV, "")
    if not latency:
        return False
    from memsieve import embedders

    original = embedders.from_settings
    count_url = env.get("MEMSIEVE_REDIS_URL") if env.get(COUNT_ENV) else None

    def from_settings(settings: Any, name: str | None = None, redis_client: Any = None) -> Any:
        if (name or settings.embedder) == "hashing":
            return LatencyEmbedder(settings.hashing_dims, float(latency), count_url)
        return original(settings, name, redis_client)

    embedders.from_settings = from_settings
    return True

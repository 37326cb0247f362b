"""The hashing embedder behind a simulated API round trip, for benchmarks only.

`MEMSIEVE_EMBEDDER=hashing MEMSIEVE_FAKE_EMBED_LATENCY_MS=100` makes every `embed()` call
(one provider request, whatever its batch size) sleep that long before answering, as an
OpenAI request would. The vectors are the hashing embedder's, so results stay deterministic.
With `MEMSIEVE_FAKE_EMBED_COUNT=1`, requests and texts are counted in Redis
(`memsieve:bench:embed-requests`, `memsieve:bench:embed-texts`) so a benchmark can read
them across worker processes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from worker.embedders.hashing import HashingEmbedder

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

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        time.sleep(self.latency_s)
        if self._counter is not None:
            self._counter.incr(REQUESTS_KEY)
            self._counter.incrby(TEXTS_KEY, len(texts))
        return super().embed(texts)

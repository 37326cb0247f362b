"""The simulated-latency embedder lives in worker.embedders.hashing (the worker builds it
from MEMSIEVE_FAKE_EMBED_LATENCY_MS); re-exported here for the bench scripts."""

from memsieve.embedders.hashing import REQUESTS_KEY, TEXTS_KEY, LatencyEmbedder

__all__ = ["REQUESTS_KEY", "TEXTS_KEY", "LatencyEmbedder"]

"""The pipeline's embedding step: the Postgres embedding cache behind
worker.embedders.cache.cached_embed (batched calls, bad inputs isolated, misses only)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from memsieve import errors, metrics
from memsieve.embedders import base, batching, cache
from memsieve.embedders.base import Embedder
from memsieve.store.postgres import Store

EmbedFailure = batching.EmbedFailure
Vector = base.Vector


class StoreCache:
    """EmbeddingCache over the store's embedding_cache table."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # The store maps an unreachable database to a TransientError (store/dberrors.py), which
    # cached_embed treats as a cache miss on write and the flush retries on read.
    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, list[float]]:
        return self.store.cache_get_many(model, hashes)

    def put_many(self, model: str, items: Sequence[tuple[str, list[float]]]) -> None:
        self.store.cache_put_many(model, dict(items))


class Metered:
    """The embedder, with every provider call measured (tokens and retries as it counts them)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        stats = getattr(self._inner, "stats", None)
        tokens, retries = getattr(stats, "tokens", 0), getattr(stats, "retries", 0)
        started, outcome = time.perf_counter(), "error"
        try:
            vectors = list(self._inner.embed(texts))
            outcome = "ok"
            return vectors
        except errors.PermanentError:
            outcome = "refused"
            raise
        finally:
            metrics.embedded(
                self._inner.model,
                len(texts),
                time.perf_counter() - started,
                outcome,
                getattr(stats, "tokens", 0) - tokens,
                getattr(stats, "retries", 0) - retries,
            )


def embed_items(
    embedder: Embedder, store: Store, items: Sequence[tuple[str, str]]
) -> list[Vector | EmbedFailure]:
    """One vector or EmbedFailure per (content_hash, text): cached ones cost nothing,
    identical texts are sent once, batches respect the provider's limits.
    Raises batching.EmbedderRefused when the provider refuses us (key, quota, model)."""
    return cache.cached_embed(Metered(embedder), StoreCache(store), items)  # type: ignore[arg-type]

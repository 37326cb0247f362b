"""Embedding cache keyed by (embedder identity, content hash).

Redelivery, a replayed backfill and identical text in two namespaces all cost no API call:
`cached_embed` looks every hash up first and sends only the misses, each distinct text once.

The durable implementation is the store's `embedding_cache` table (migration 001; its
statements are the named queries cache_get and cache_put in worker/store/sql/queries.sql),
written in its own short transaction, not in the namespace write transaction: a cached
vector is valid whether or not the memory write commits. The store raises a TransientError
when the database is unreachable; a failed cache write costs only a future API call.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Sequence
from typing import Protocol

from memsieve import errors
from memsieve.embedders import base, batching
from memsieve.embedders.base import Embedder

log = logging.getLogger(__name__)

Vector = base.Vector


class EmbeddingCache(Protocol):
    """Vectors by (model, content_hash). `model` is an opaque key: use cache_model()."""

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, Vector]:
        """The cached vectors among `hashes`; misses are absent from the dict."""
        ...

    def put_many(self, model: str, items: Sequence[tuple[str, Vector]]) -> None:
        """Store (content_hash, vector) pairs; an existing entry is kept, not overwritten."""
        ...


def cache_model(embedder: Embedder) -> str:
    """The cache key of an embedder's vector space: model and dims together.

    text-embedding-3-small at 512 and at 1536 dimensions are different spaces.
    """
    return f"{embedder.model}@{embedder.dims}"


def text_hash(text: str) -> str:
    """sha256 hex of the UTF-8 text: the same as schemas.memory.content_hash of the
    heading+content that memory_text() joins, so the gate's hash can serve as cache key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class InMemoryEmbeddingCache:
    """A dict behind a lock: for tests and the bench. Counts lookups and stores."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], Vector] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, Vector]:
        with self._lock:
            found = {h: self._data[(model, h)] for h in hashes if (model, h) in self._data}
            self.hits += len(found)
            self.misses += len(set(hashes)) - len(found)
            return found

    def put_many(self, model: str, items: Sequence[tuple[str, Vector]]) -> None:
        with self._lock:
            for h, v in items:
                self._data.setdefault((model, h), list(v))

    def __len__(self) -> int:
        return len(self._data)


def cached_embed(
    embedder: Embedder,
    cache: EmbeddingCache,
    items: Sequence[tuple[str, str]],
    *,
    stop_on_transient: bool = True,
) -> list[Vector | batching.EmbedFailure]:
    """One outcome per (content_hash, text) item, in order; only cache misses are embedded.

    The hash must identify the exact text (use text_hash or schemas.memory.content_hash).
    Items sharing a hash are embedded once and share the vector; a failure is reported on
    each of them with its own index. Failures are never cached. Raises what
    batching.embed_isolating raises.
    """
    model = cache_model(embedder)
    hashes = [h for h, _ in items]
    hits = cache.get_many(model, list(dict.fromkeys(hashes)))
    # A vector of the wrong length is a corrupt entry: treat it as a miss, never return it.
    hits = {h: v for h, v in hits.items() if len(v) == embedder.dims}

    miss_texts: dict[str, str] = {}
    for h, text in items:
        if h not in hits:
            miss_texts.setdefault(h, text)
    miss_hashes = list(miss_texts)
    fresh: dict[str, Vector | batching.EmbedFailure] = {}
    if miss_hashes:
        outcomes = batching.embed_isolating(
            embedder, [miss_texts[h] for h in miss_hashes], stop_on_transient=stop_on_transient
        )
        fresh = dict(zip(miss_hashes, outcomes, strict=True))
        new = [(h, o) for h, o in fresh.items() if not isinstance(o, batching.EmbedFailure)]
        if new:
            try:
                cache.put_many(model, new)
            except errors.TransientError as exc:
                # The vectors are paid for and correct; losing the cache entry costs only
                # a future API call, so the flush goes on.
                log.warning("embedding cache write failed, continuing: %s", exc)

    results: list[Vector | batching.EmbedFailure] = []
    for i, h in enumerate(hashes):
        o = hits[h] if h in hits else fresh[h]
        if isinstance(o, batching.EmbedFailure):
            o = batching.EmbedFailure(i, o.reason, o.message, o.permanent, o.retry_after)
        results.append(o)
    return results

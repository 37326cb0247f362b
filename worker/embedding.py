"""The pipeline's embedding step: cache first, then batched calls, isolating bad inputs."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from worker import errors, metrics
from worker.embedders.base import Embedder


@dataclass(frozen=True)
class EmbedFailure:
    """One input the provider refused for good; its event goes dead with this reason."""

    reason: str
    detail: str


class VectorCache(Protocol):
    def cache_get_many(self, model: str, hashes: Sequence[str]) -> dict[str, list[float]]: ...
    def cache_put_many(self, model: str, items: dict[str, list[float]]) -> None: ...


class EmbedResult(list):  # type: ignore[type-arg]
    """A list of vectors or EmbedFailure, plus how many provider calls it took."""

    calls: int = 0


def _embed_isolating(
    embedder: Embedder, texts: list[str], result: EmbedResult
) -> list[list[float] | EmbedFailure]:
    """Embed `texts`; on a permanent error split the batch to isolate the bad input."""
    out: list[list[float] | EmbedFailure] = []
    for start in range(0, len(texts), embedder.max_batch):
        chunk = texts[start : start + embedder.max_batch]
        out.extend(_embed_chunk(embedder, chunk, result))
    return out


def _call(embedder: Embedder, chunk: list[str]) -> list[list[float] | EmbedFailure]:
    """One provider call, measured (tokens and retries as the embedder counts them, if it does)."""
    stats = getattr(embedder, "stats", None)
    tokens, retries = getattr(stats, "tokens", 0), getattr(stats, "retries", 0)
    started, outcome = time.perf_counter(), "error"
    try:
        vectors: list[list[float] | EmbedFailure] = list(embedder.embed(chunk))
        outcome = "ok"
        return vectors
    except errors.PermanentError:
        outcome = "refused"
        raise
    finally:
        metrics.embedded(
            embedder.model, len(chunk), time.perf_counter() - started, outcome,
            getattr(stats, "tokens", 0) - tokens, getattr(stats, "retries", 0) - retries,
        )  # fmt: skip


def _embed_chunk(
    embedder: Embedder, chunk: list[str], result: EmbedResult
) -> list[list[float] | EmbedFailure]:
    try:
        result.calls += 1
        return _call(embedder, chunk)
    except errors.PermanentError as exc:
        if len(chunk) == 1:
            return [EmbedFailure("embedding_refused", str(exc)[:500])]
        mid = len(chunk) // 2
        return _embed_chunk(embedder, chunk[:mid], result) + _embed_chunk(
            embedder, chunk[mid:], result
        )


def embed_items(
    embedder: Embedder, cache: VectorCache, items: Sequence[tuple[str, str]]
) -> EmbedResult:
    """Vectors for (content_hash, text) items: cached ones cost nothing, identical texts
    in one batch are sent once. Raises TransientError when the provider stays unavailable."""
    result = EmbedResult()
    cached = cache.cache_get_many(embedder.model, [h for h, _ in items])
    misses: dict[str, str] = {}
    for h, text in items:
        if h not in cached:
            misses.setdefault(h, text)
    fresh: dict[str, list[float] | EmbedFailure] = {}
    if misses:
        keys = list(misses)
        vectors = _embed_isolating(embedder, [misses[k] for k in keys], result)
        fresh = dict(zip(keys, vectors, strict=True))
        cache.cache_put_many(
            embedder.model, {k: v for k, v in fresh.items() if not isinstance(v, EmbedFailure)}
        )
    for h, _ in items:
        result.append(cached[h] if h in cached else fresh[h])
    return result

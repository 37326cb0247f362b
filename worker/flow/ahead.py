"""Embedding ahead (issue 16: both cores work when one namespace dominates).

A worker whose flush finds its namespace busy does not sit idle: it embeds, a chunk at a
time, the events the holder will claim next (pending, unclaimed, oldest first, not cached
yet) into the embedding cache, and shares their token vectors with the judge
(memsieve.embedders.token_share), so that the holder finds its next batch embedded and only
gates it. It goes on while the namespace stays locked, until it is two batches ahead, its
budget ends (memsieve.flow.runtime.helper_budget), or work waits for this process on a queue
it serves.

Best effort and harmless: the cache is keyed by content hash and model, so what the holder
finds there is what it would have computed; any failure leaves the work to the holder, and a
text that failed ahead is never tried ahead again (a poison input costs its namespace at most
one attempt beyond the flush's own).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

import redis
from memsieve import constants, errors
from memsieve.embedders.cache import cache_model
from memsieve.flow import embed
from memsieve.settings import Settings
from memsieve.store.postgres import Store

log = logging.getLogger("memsieve.flow.ahead")


class Pipeline(Protocol):
    """What embedding ahead needs of memsieve.flow.pipeline.Pipeline (which calls it)."""

    settings: Settings
    store: Store
    redis: redis.Redis
    token_encoder: Any

    @property
    def embedder(self) -> Any: ...

    def ensure_bound(self) -> None: ...


# Texts per model call while ahead: small enough that the holder, claiming a batch this
# worker is embedding, redoes little of it; large enough for the runtime's batching.
CHUNK = 16
# How far ahead of the holder's claim: the oldest pending events up to this many batches.
LOOKAHEAD_BATCHES = 2
# How long the failed texts of a namespace are remembered.
FAILED_TTL_S = 3600


def embed_ahead(
    pipe: Pipeline, namespace: str, budget: float = 0.0, stop: Callable[[], bool] | None = None
) -> int:
    """Embed ahead of the worker draining `namespace`; returns how many texts are ready.
    One chunk at least (if any is to do), then more while `budget` (seconds) lasts, the
    namespace is locked and `stop()` is false. 0 when another worker is embedding ahead."""
    key = constants.embed_ahead_key(namespace)
    try:
        # Outlives the budget (and a chunk past it), so that one helper at a time embeds.
        if not pipe.redis.set(key, "1", nx=True, ex=max(60, int(2 * budget) + 1)):
            return 0
    except redis.RedisError:
        return 0
    deadline = time.monotonic() + budget
    ready = 0
    try:
        while True:
            done = _one_chunk(pipe, namespace)
            ready += done
            if done == 0 or time.monotonic() >= deadline or (stop is not None and stop()):
                return ready
            if not pipe.redis.exists(constants.lock_key(namespace)):
                return ready  # the holder is done: this worker may flush it now
    except redis.RedisError:
        return ready
    finally:
        try:
            pipe.redis.delete(key)
        except redis.RedisError:
            pass


def _one_chunk(pipe: Pipeline, namespace: str) -> int:
    """Embed the next chunk the holder has not claimed and nobody has embedded; returns how
    many of its texts are ready (0: nothing to do, or it failed). Only a text the embedder
    failed on is remembered as failed: a store or Redis error finding the chunk is not its."""
    size = pipe.settings.batch_size
    failed_key = constants.embed_ahead_failed_key(namespace)
    try:
        items = pipe.store.pending_ahead(namespace, LOOKAHEAD_BATCHES * size)
        if items:
            seen = pipe.redis.smismember(failed_key, [h for h, _ in items])
            items = [item for item, was in zip(items, seen, strict=True) if not was]
        if items:
            pipe.ensure_bound()
            have = pipe.store.cache_has(cache_model(pipe.embedder), [h for h, _ in items])
            items = list(dict((h, t) for h, t in items if h not in have).items())
            items = items[: min(CHUNK, size)]
    except (errors.MemsieveError, redis.RedisError) as exc:
        log.info("embed ahead of %s: %s; left to the flush", namespace, type(exc).__name__)
        return 0
    if not items:
        return 0
    try:
        out = embed.embed_items(pipe.embedder, pipe.store, items)
    except (errors.MemsieveError, redis.RedisError) as exc:
        _remember_failed(pipe, failed_key, namespace, [h for h, _ in items], type(exc).__name__)
        return 0
    if pipe.token_encoder is not None:
        pipe.token_encoder.absorb()  # never raises: an unshared text is encoded again later
    failed = [h for (h, _), v in zip(items, out, strict=True) if isinstance(v, embed.EmbedFailure)]
    _remember_failed(pipe, failed_key, namespace, failed, "failed")
    return len(items) - len(failed)


def _remember_failed(pipe: Pipeline, key: str, namespace: str, hashes: list[str], why: str) -> None:
    if not hashes:
        return
    log.warning(
        "embed ahead of %s: %d events not embedded (%s); left to the flush, not tried ahead again",
        namespace,
        len(hashes),
        why,
    )
    try:
        pipe.redis.sadd(key, *hashes)
        pipe.redis.expire(key, FAILED_TTL_S)
    except redis.RedisError:
        pass

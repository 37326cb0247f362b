"""A worker that finds a namespace busy embeds the holder's next batch meanwhile (issue 16:
both cores work when one namespace dominates): what it embeds is what the holder claims
next, the holder's flush then finds those vectors in the cache, and only one worker embeds
ahead of a namespace at a time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from memsieve import constants, errors
from memsieve.embedders.hashing import HashingEmbedder
from memsieve.flow.pipeline import Pipeline
from memsieve.schemas.memory import memory_text
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from tests.support.bulk import events


class Counting(HashingEmbedder):
    def __init__(self, dims: int) -> None:
        super().__init__(dims)
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return super().embed(texts)


class FailsOn(Counting):
    """Times out on every batch holding `marker`, as a poison input does."""

    def __init__(self, dims: int, marker: str) -> None:
        super().__init__(dims)
        self.marker = marker
        self.batches = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if any(self.marker in t for t in texts):
            self.batches += 1
            raise errors.TransientError("times out on this input")
        return super().embed(texts)


def texts(evs: list[dict[str, Any]]) -> list[str]:
    return [memory_text(e["heading"], e["content"]) for e in evs]


def test_a_busy_worker_embeds_the_next_batch_and_the_holder_finds_it_cached(
    settings: Settings, store: Store
) -> None:
    evs = events(30)
    ahead = Counting(settings.hashing_dims)
    holder_emb = Counting(settings.hashing_dims)
    helper = Pipeline(replace(settings, batch_size=10), store=store, embedder=ahead)
    holder = Pipeline(replace(settings, batch_size=10), store=store, embedder=holder_emb)
    try:
        for e in evs:  # one by one: a distinct received_at each, the order claims follow
            holder.accept([e])
        # The holder has claimed the first batch: the helper embeds the one after it.
        store.set_claimed("bulk", [e["event_id"] for e in evs[:10]], True)
        assert helper.embed_ahead("bulk") == 10
        assert sorted(ahead.texts) == sorted(texts(evs[10:20]))
        # Another worker embedding ahead already: nothing is done twice.
        helper.redis.set(constants.embed_ahead_key("bulk"), "1")
        assert helper.embed_ahead("bulk") == 0
        assert len(ahead.texts) == 10
        helper.redis.delete(constants.embed_ahead_key("bulk"))
        # The holder's batches: what was embedded ahead comes from the cache.
        store.set_claimed("bulk", [e["event_id"] for e in evs[:10]], False)
        result = holder.flush("bulk")
        assert len(result.outcomes) == 30
        assert {o.decision for o in result.outcomes} == {"inserted"}
        assert sorted(holder_emb.texts) == sorted(texts(evs[:10] + evs[20:]))
        # Nothing left pending: nothing to embed ahead.
        assert helper.embed_ahead("bulk") == 0
        assert len(ahead.texts) == 10
    finally:
        helper.redis.close()
        holder.redis.close()


def test_a_text_that_fails_ahead_is_never_tried_ahead_again(
    settings: Settings, store: Store
) -> None:
    evs = events(10, namespace="ahead-poison")
    evs[0]["content"] += " POISON-MARK"
    ahead = FailsOn(settings.hashing_dims, "POISON-MARK")
    helper = Pipeline(replace(settings, batch_size=10), store=store, embedder=ahead)
    holder = Pipeline(
        replace(settings, batch_size=10), store=store, embedder=Counting(settings.hashing_dims)
    )
    try:
        for e in evs:
            holder.accept([e])
        assert helper.embed_ahead("ahead-poison") == 0
        assert ahead.batches == 1
        # Its batch is left to the flush: a second pass embeds nothing of it ahead.
        assert helper.embed_ahead("ahead-poison") == 0
        assert helper.embed_ahead("ahead-poison") == 0
        assert ahead.batches == 1 and ahead.texts == []
        # The holder, whose embedder is healthy, writes all ten.
        result = holder.flush("ahead-poison")
        assert [o.decision for o in result.outcomes] == ["inserted"] * 10
    finally:
        helper.redis.close()
        holder.redis.close()


def test_ahead_goes_on_while_the_namespace_is_locked_up_to_two_batches(
    settings: Settings, store: Store
) -> None:
    ns = "ahead-loop"
    evs = events(60, namespace=ns)
    emb = Counting(settings.hashing_dims)
    helper = Pipeline(replace(settings, batch_size=10), store=store, embedder=emb)
    try:
        for e in evs:
            helper.accept([e])
        store.set_claimed(ns, [e["event_id"] for e in evs[:10]], True)
        # Not locked (the holder is done): one chunk, then this worker may flush it itself.
        assert helper.embed_ahead(ns, budget=30.0) == 10
        assert sorted(emb.texts) == sorted(texts(evs[10:20]))
        # Asked to stop (work waits for this process): one chunk.
        helper.redis.set(constants.lock_key(ns), "holder")
        assert helper.embed_ahead(ns, budget=30.0, stop=lambda: True) == 10
        assert sorted(emb.texts) == sorted(texts(evs[10:30]))
        # Locked, nothing waiting: on until two batches past the holder's claim are cached.
        store.set_claimed(ns, [e["event_id"] for e in evs[10:20]], True)
        assert helper.embed_ahead(ns, budget=30.0) == 10
        assert sorted(emb.texts) == sorted(texts(evs[10:40]))
        # The holder claims the next batch: ahead moves on, the cached texts never again.
        store.set_claimed(ns, [e["event_id"] for e in evs[20:30]], True)
        assert helper.embed_ahead(ns, budget=30.0) == 10
        assert sorted(emb.texts) == sorted(texts(evs[10:50]))
        assert len(emb.texts) == len(set(emb.texts)) == 40
    finally:
        helper.redis.delete(constants.lock_key(ns))
        helper.redis.close()


def test_a_flush_with_more_than_a_batch_waiting_wakes_one_helper(
    settings: Settings, store: Store, monkeypatch: Any
) -> None:
    from memsieve.tasks import flush as flush_task

    ns = "ahead-wake"
    woken: list[tuple[str, str]] = []
    monkeypatch.setattr(flush_task, "flush_later", lambda n, queue: woken.append((n, queue)))
    pipe = Pipeline(
        replace(settings, batch_size=10), store=store, embedder=Counting(settings.hashing_dims)
    )
    off = Pipeline(replace(settings, batch_size=10, embed_ahead=False), store=store)
    try:
        pipe.redis.delete(constants.embed_ahead_wake_key(ns))
        evs = events(11, namespace=ns)
        pipe.accept(evs[:10])
        # One batch or less waiting: the flush drains it alone.
        flush_task.wake_helper(pipe, ns, constants.QUEUE_FLUSH)
        assert woken == []
        pipe.redis.delete(constants.embed_ahead_wake_key(ns))
        pipe.accept(evs[10:])
        flush_task.wake_helper(off, ns, constants.QUEUE_FLUSH)  # embedding ahead off
        assert woken == []
        flush_task.wake_helper(pipe, ns, constants.QUEUE_BACKFILL)
        assert woken == [(ns, constants.QUEUE_BACKFILL)]
        # One wake-up per namespace every few seconds.
        flush_task.wake_helper(pipe, ns, constants.QUEUE_FLUSH)
        assert woken == [(ns, constants.QUEUE_BACKFILL)]
        assert 0 < pipe.redis.ttl(constants.embed_ahead_wake_key(ns)) <= 5
    finally:
        pipe.redis.close()
        off.redis.close()

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

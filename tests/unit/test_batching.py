"""Batch planning, failure isolation and the cache, with in-process embedders (no network)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memsieve import errors
from memsieve.embedders import batching, cache
from memsieve.embedders.batching import EmbedderRefused, EmbedFailure, plan_batches
from memsieve.embedders.hashing import HashingEmbedder


def word_count(text: str) -> int:
    return len(text.split())


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 40), max_size=200),
    max_inputs=st.integers(1, 50),
    max_tokens=st.integers(1, 120),
    per_input=st.integers(1, 60),
)
def test_plan_batches_respects_every_limit(
    sizes: list[int], max_inputs: int, max_tokens: int, per_input: int
) -> None:
    texts = [" ".join(["w"] * n) for n in sizes]
    batches, too_long = plan_batches(texts, max_inputs, max_tokens, per_input, word_count)
    planned = [i for b in batches for i in b]
    # every text is planned exactly once or refused, in order
    assert sorted(planned + too_long) == list(range(len(texts)))
    assert planned == sorted(planned)
    assert too_long == [i for i, n in enumerate(sizes) if n > min(per_input, max_tokens)]
    for b in batches:
        assert 1 <= len(b) <= max_inputs
        assert sum(sizes[i] for i in b) <= max_tokens
    # greedy: no two neighbouring batches could have been one
    for a, b in zip(batches, batches[1:], strict=False):
        merged = a + b
        assert len(merged) > max_inputs or sum(sizes[i] for i in merged) > max_tokens


def test_plan_batches_backfill_takes_ceil_n_over_batch() -> None:
    batches, too_long = plan_batches(["x"] * 10_000, 2048, 300_000, 8192, word_count)
    assert len(batches) == math.ceil(10_000 / 2048) and too_long == []


class Picky:
    """Refuses any batch holding 'BAD' (like an HTTP 400), optionally naming the index."""

    model = "picky"
    dims = 4
    default_threshold = 0.1
    max_batch = 16

    def __init__(self, name_index: bool = False, wrong_index: bool = False) -> None:
        self.calls: list[int] = []
        self.name_index = name_index
        self.wrong_index = wrong_index

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        bad = [i for i, t in enumerate(texts) if "BAD" in t]
        if bad:
            index = None
            if self.name_index:
                index = (bad[0] + 1) % len(texts) if self.wrong_index else bad[0]
            raise batching.InputRejected("refused", index=index)
        return [[float(len(t)), 0.0, 0.0, 1.0] for t in texts]


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 60), bad=st.sets(st.integers(0, 59), max_size=5), named=st.booleans())
def test_isolation_finds_exactly_the_bad_inputs(n: int, bad: set[int], named: bool) -> None:
    texts = [f"t{i} BAD" if i in bad else f"t{i}" for i in range(n)]
    out = batching.embed_isolating(Picky(name_index=named), texts)
    failed = {o.index for o in out if isinstance(o, EmbedFailure)}
    assert failed == {i for i in bad if i < n}
    for i, o in enumerate(out):
        if not isinstance(o, EmbedFailure):
            assert o[0] == len(texts[i])  # each vector is its own text's, in order


def test_a_wrong_index_from_the_embedder_costs_a_call_not_an_event() -> None:
    emb = Picky(name_index=True, wrong_index=True)
    texts = ["a", "b BAD", "c", "d"]
    out = batching.embed_isolating(emb, texts)
    assert [o.index for o in out if isinstance(o, EmbedFailure)] == [1]


def test_refusal_propagates_and_transient_keeps_pending() -> None:
    class Refusing(Picky):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            raise EmbedderRefused("bad key", reason="unauthorized")

    with pytest.raises(EmbedderRefused):
        batching.embed_isolating(Refusing(), ["a", "b"])

    class Flaky(Picky):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            raise errors.TransientError("503", retry_after=2.0)

    out = batching.embed_isolating(Flaky(), ["a", "b"], stop_on_transient=False)
    assert all(isinstance(o, EmbedFailure) and not o.permanent for o in out)
    assert all(isinstance(o, EmbedFailure) and o.retry_after == 2.0 for o in out)


def test_cached_embed_sends_each_distinct_miss_once() -> None:
    emb = HashingEmbedder(dims=16)
    store = cache.InMemoryEmbeddingCache()
    texts = ["a b", "c d", "a b", "e f", "c d"]
    items = [(cache.text_hash(t), t) for t in texts]
    out = cache.cached_embed(emb, store, items)
    assert emb.calls == 1 and len(store) == 3
    assert out[0] == out[2] and out[1] == out[4]
    out2 = cache.cached_embed(emb, store, items + [(cache.text_hash("g h"), "g h")])
    assert emb.calls == 2 and out2[:5] == out
    assert cache.cached_embed(emb, store, items) == out and emb.calls == 2


def test_cache_is_per_model_and_dims_and_ignores_corrupt_entries() -> None:
    store = cache.InMemoryEmbeddingCache()
    small, big = HashingEmbedder(dims=8), HashingEmbedder(dims=16)
    items = [(cache.text_hash("x y"), "x y")]
    cache.cached_embed(small, store, items)
    cache.cached_embed(big, store, items)
    assert small.calls == 1 and big.calls == 1
    store.put_many(cache.cache_model(big), [(cache.text_hash("z"), [1.0])])  # wrong length
    out = cache.cached_embed(big, store, [(cache.text_hash("z"), "z")])
    assert big.calls == 2 and isinstance(out[0], list) and len(out[0]) == 16


def test_cached_failures_are_reported_per_item_and_never_cached() -> None:
    emb = Picky()
    store = cache.InMemoryEmbeddingCache()
    items = [("h1", "ok"), ("h2", "BAD"), ("h2", "BAD")]
    out = cache.cached_embed(emb, store, items)
    assert [o.index for o in out if isinstance(o, EmbedFailure)] == [1, 2]
    assert len(store) == 1

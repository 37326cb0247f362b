"""memsieve.gate.vectors.NamespaceCache: budget, eviction order, and no wipe of the others."""

from __future__ import annotations

import numpy as np
from memsieve.gate import vectors


def live_set(n: int, dims: int = 64) -> vectors.LiveSet:
    rows = [vectors.Row(f"m{i}", "retro", "h", f"c{i}", f"hash{i}") for i in range(n)]
    vecs = np.random.default_rng(n).standard_normal((n, dims)).astype(np.float32)
    return vectors.LiveSet.build(dims, rows, vecs)


def test_a_namespace_larger_than_the_budget_leaves_the_others_cached() -> None:
    small_a, small_b, huge = live_set(10), live_set(12), live_set(5000)
    cache = vectors.NamespaceCache(budget_mb=(small_a.nbytes + small_b.nbytes) * 1.5 / 2**20)
    cache.put("a", "m", 1, small_a)
    cache.put("b", "m", 1, small_b)
    cache.put("huge", "m", 7, huge)
    assert cache.get("huge", "m", 7) is None
    assert cache.get("a", "m", 1) is small_a
    assert cache.get("b", "m", 1) is small_b


def test_least_recently_used_goes_first_and_versions_must_match() -> None:
    a, b, c = live_set(10), live_set(10), live_set(10)
    cache = vectors.NamespaceCache(budget_mb=(a.nbytes * 2.5) / 2**20)
    cache.put("a", "m", 1, a)
    cache.put("b", "m", 1, b)
    assert cache.get("a", "m", 1) is a  # a is now the most recently used
    cache.put("c", "m", 1, c)
    assert cache.get("b", "m", 1) is None
    assert cache.get("a", "m", 1) is a and cache.get("c", "m", 1) is c
    assert cache.get("a", "m", 2) is None  # another version: reload, never trust


def test_a_set_that_outgrew_the_budget_is_dropped_on_its_next_put() -> None:
    small = live_set(10)
    cache = vectors.NamespaceCache(budget_mb=small.nbytes * 3 / 2**20)
    cache.put("a", "m", 1, small)
    cache.put("a", "m", 2, live_set(2000))
    assert cache.get("a", "m", 1) is None and cache.get("a", "m", 2) is None

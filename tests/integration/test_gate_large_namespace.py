"""A namespace larger than MEMSIEVE_GATE_CACHE_MB is searched in SQL, with the same decisions
(issue 16): it is neither reloaded whole for every batch nor kept at the others' expense."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from memsieve.flow.pipeline import Pipeline
from memsieve.gate import vectors
from memsieve.settings import Settings
from memsieve.store import gate_write
from memsieve.store.postgres import Store

from tests.support import db

# 1 MiB holds 490 live rows of 384 d (vectors.live_set_nbytes); 700 are well past it.
CACHE_MB = 1
BASE = 700


def event(i: int, ns: str, content: str | None = None) -> dict[str, Any]:
    return {
        "event_id": f"e-{i}",
        "namespace": ns,
        "kind": "retro",
        "heading": f"lesson {i % BASE}",
        "content": content
        or f"Deploy {i * 7919 % 1000} broke cache {i * 104729 % 977} until pinned to v{i}",
    }


def later(ns: str) -> list[dict[str, Any]]:
    """Byte-identical repeats, one-word edits and new facts of the first BASE events."""
    out = []
    for j in range(30):
        i = j * 23
        base = event(i, ns)
        out.append({**base, "event_id": f"e-{BASE + j}"})  # repeat: merged
        out.append(
            {**base, "event_id": f"e-{BASE + 100 + j}", "content": base["content"] + " again"}
        )
        out.append(event(BASE + 200 + j, ns))
    return out


def make(settings: Settings, cache_mb: int, batch: int) -> Pipeline:
    store = Store(settings.database_url or "", cache_mb=cache_mb)
    return Pipeline(replace(settings, gate_cache_mb=cache_mb, batch_size=batch), store=store)


@pytest.fixture
def workers(settings: Settings, store: Store) -> Iterator[dict[str, Pipeline]]:
    """Workers with a cache large enough for the namespace or smaller than it, writing in
    batches of 10 (searched in SQL once over the cache) or 256 (loaded whole)."""
    pipes = {
        "big": make(settings, 512, 10),
        "small": make(settings, CACHE_MB, 10),
        "small-256": make(settings, CACHE_MB, 256),
    }
    yield pipes
    for pipe in pipes.values():
        pipe.redis.close()
        pipe.store.close()


def run(pipe: Pipeline, ns: str) -> list[tuple[Any, ...]]:
    pipe.accept([event(i, ns) for i in range(BASE)])
    pipe.flush(ns)
    pipe.accept(later(ns))
    pipe.flush(ns)
    rows = db.query(
        pipe.store,
        "SELECT e.event_id, e.status, e.decision, e.reason, e.distance, old.event_id AS old"
        " FROM events e LEFT JOIN memories old ON old.id = e.supersedes"
        " WHERE e.ns_key = %s ORDER BY e.event_id",
        (ns,),
    )
    return [
        (
            r["event_id"],
            r["status"],
            r["decision"],
            r["reason"],
            None if r["distance"] is None else round(r["distance"], 5),
            r["old"],
        )
        for r in rows
    ]


def test_a_namespace_over_the_cache_is_searched_in_sql_with_the_same_decisions(
    workers: dict[str, Pipeline],
) -> None:
    big, small, small_256 = workers["big"], workers["small"], workers["small-256"]
    dims = big.embedder.dims
    assert not small.store.gate_cache.fits(BASE, dims)
    assert big.store.gate_cache.fits(BASE + 90, dims)
    assert gate_write.SQL_MAX_EVENTS >= 10

    in_memory = run(big, "big-a")
    in_sql = run(small, "big-b")
    loaded = run(small_256, "big-c")

    assert len(in_memory) == BASE + 90
    assert {r[1] for r in in_memory} == {"written"}
    decisions = [r[2] for r in in_memory]
    # The later events met the namespace: repeats merged, edits matched their originals.
    assert decisions.count("merged") >= 30
    assert any(r[5] is not None for r in in_memory) or decisions.count("conflict") > 0
    assert in_sql == in_memory
    assert loaded == in_memory

    # Batches of 10: searched in SQL once the namespace outgrew the cache; none kept.
    cache = small.store.gate_cache
    assert cache.too_large >= (BASE - 490) // 10
    assert cache.peek("big-b", small.embedder.model) is None
    # Batches of 256: loaded whole (cheaper than 256 searches), and not kept either.
    assert small_256.store.gate_cache.too_large == 0
    assert small_256.store.gate_cache.loads >= 2
    assert small_256.store.gate_cache.peek("big-c", small.embedder.model) is None
    assert big.store.gate_cache.too_large == 0
    assert big.store.gate_cache.peek("big-a", big.embedder.model) is not None


def test_a_small_namespace_stays_in_memory_beside_a_large_one(
    workers: dict[str, Pipeline],
) -> None:
    small = workers["small"]
    cache = small.store.gate_cache
    small.accept([event(i, "big-b") for i in range(BASE)])
    small.flush("big-b")
    small.accept([event(i, "tiny") for i in range(5)])
    small.flush("tiny")
    before = cache.too_large
    small.accept([event(5, "tiny")])
    small.flush("tiny")
    assert cache.too_large == before  # no SQL search for the small one
    live = cache.peek("tiny", small.embedder.model)
    assert live is not None and int(live[1].alive.sum()) == 6
    assert vectors.live_set_nbytes(6, small.embedder.dims) <= cache.budget

"""A worker's cached live set is brought up to date with only the rows changed since
(issue 16): another worker's writes cost one small query, not a reload of the namespace."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from memsieve.flow.pipeline import Pipeline
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from tests.support import db


def event(i: int, ns: str = "shared", text: str | None = None) -> dict[str, Any]:
    return {
        "event_id": f"e-{ns}-{i}",
        "namespace": ns,
        "kind": "retro",
        "heading": f"lesson {i}",
        "content": text or f"Deploy {i * 7919 % 1000} broke cache {i * 104729 % 977} until pinned",
    }


@pytest.fixture
def other(settings: Settings) -> Iterator[Pipeline]:
    """A second worker: its own store, hence its own process-wide vector cache."""
    store = Store(settings.database_url or "")
    pipe = Pipeline(settings, store=store)
    yield pipe
    pipe.redis.close()
    store.close()


def write(pipe: Pipeline, *events: dict[str, Any]) -> list[str]:
    pipe.accept(list(events))
    pipe.flush(events[0]["namespace"])
    rows = db.query(
        pipe.store,
        "SELECT event_id, decision FROM events WHERE event_id = ANY(%s) ORDER BY event_id",
        ([e["event_id"] for e in events],),
    )
    return [r["decision"] for r in rows]


def test_another_workers_rows_are_applied_not_reloaded(pipeline: Pipeline, other: Pipeline) -> None:
    cache = pipeline.store.gate_cache
    assert write(pipeline, event(1), event(2), event(3)) == ["inserted"] * 3
    assert (cache.loads, cache.refreshes) == (1, 0)
    # Another worker inserts two facts and supersedes nothing; ours then gets a batch.
    assert write(other, event(4), event(5)) == ["inserted", "inserted"]
    # Event 6 repeats event 5's text exactly: merged only if our copy has other's row.
    dup = event(6, text=event(5)["content"])
    dup["heading"] = event(5)["heading"]
    assert write(pipeline, dup) == ["merged"]
    assert (cache.loads, cache.refreshes) == (1, 1)
    live = cache.get("shared", pipeline.embedder.model, _version(pipeline.store))
    assert live is not None and int(live.alive.sum()) == 5


def test_a_row_hidden_by_another_writer_is_hidden_here_too(
    pipeline: Pipeline, other: Pipeline
) -> None:
    cache = pipeline.store.gate_cache
    write(pipeline, event(1), event(2))
    # A soft delete from outside the gate (an operator's revert, a re-embed): one change.
    db.query(
        other.store,
        "UPDATE memories SET deleted_at = now() WHERE event_id = 'e-shared-1' RETURNING id",
    )
    write(pipeline, event(3))
    assert (cache.loads, cache.refreshes) == (1, 1)
    live = cache.get("shared", pipeline.embedder.model, _version(pipeline.store))
    assert live is not None
    assert sorted(live.rows[i].heading for i in range(live.n) if live.alive[i]) == [
        "lesson 2",
        "lesson 3",
    ]


def test_a_hard_delete_forces_a_full_load(pipeline: Pipeline, other: Pipeline) -> None:
    cache = pipeline.store.gate_cache
    write(pipeline, event(1), event(2))
    db.query(other.store, "DELETE FROM memories WHERE event_id = 'e-shared-1' RETURNING id")
    write(pipeline, event(3))
    # The bump has no row to show for it: the copy cannot be proven complete.
    assert (cache.loads, cache.refreshes) == (2, 0)
    live = cache.get("shared", pipeline.embedder.model, _version(pipeline.store))
    assert live is not None and int(live.alive.sum()) == 2


def test_row_versions_match_the_namespace_version(pipeline: Pipeline) -> None:
    write(pipeline, event(1), event(2))
    write(pipeline, event(3, ns="elsewhere"))
    rows = db.query(
        pipeline.store,
        "SELECT namespace, array_agg(row_version ORDER BY row_version) AS v FROM memories"
        " GROUP BY 1 ORDER BY 1",
    )
    assert rows == [{"namespace": "elsewhere", "v": [1]}, {"namespace": "shared", "v": [1, 2]}]


def _version(store: Store) -> int:
    rows = db.query(store, "SELECT version FROM namespace_versions WHERE namespace = 'shared'")
    return int(rows[0]["version"])

"""DESIGN invariants enforced by the schema and the write transaction."""

from __future__ import annotations

import psycopg
import pytest

from schemas.events import content_hash
from worker.store import InboxEvent, Pending, Store

VEC = [1.0] + [0.0] * 383


def _insert(store: Store, ns: str, text: str, supersedes: str | None = None, live: bool = True) -> str:
    with store.pool.connection() as conn:
        row = conn.execute(
            "INSERT INTO memories (namespace, kind, heading, content, content_hash, embedding,"
            " embedding_model, embedding_dims, supersedes, event_id, deleted_at)"
            " VALUES (%s, 'retro', 'h', %s, %s, %s::vector, 'm', 384, %s, 'e',"
            " CASE WHEN %s THEN NULL ELSE clock_timestamp() + interval '1 second' END) RETURNING id::text",
            (ns, text, content_hash("h", text), str(VEC), supersedes, live),
        ).fetchone()
    assert row is not None
    return str(row[0])


def test_partial_unique_index_refuses_second_live_identical_row(store: Store) -> None:
    _insert(store, "a", "same text")
    with pytest.raises(psycopg.errors.UniqueViolation):
        _insert(store, "a", "same text")
    # Another namespace, or a dead copy, is allowed.
    _insert(store, "b", "same text")
    _insert(store, "a", "same text", live=False)


def test_supersedes_is_unique_so_a_chain_cannot_fork(store: Store) -> None:
    root = _insert(store, "a", "v1", live=False)
    _insert(store, "a", "v2", supersedes=root)
    with pytest.raises(psycopg.errors.UniqueViolation):
        _insert(store, "a", "v2 fork", supersedes=root)


def _pending(store: Store, ns: str, eid: str, text: str) -> Pending:
    store.insert_events([InboxEvent(eid, ns, "retro", "h", text, payload_hash=eid)])
    return store.claim_pending(ns, 100)[-1]


def test_supersede_of_an_already_dead_row_aborts_the_whole_batch(store: Store) -> None:
    """The soft delete must touch exactly one row. Every writer bumps the namespace version
    (so the gate's cached view of live rows is reloaded), but if the target died anyway —
    here by a change that bypasses the triggers — the whole transaction is refused."""
    p1 = _pending(store, "a", "e1", "kebab case for files")
    out = store.write_batch("a", [(p1, VEC)], "m", 384, lambda k: 0.5, [])
    old = out[0].memory_id
    with psycopg.connect(store.url, autocommit=True) as c:
        c.execute("SET session_replication_role = replica")  # no triggers: no version bump
        c.execute("UPDATE memories SET deleted_at = clock_timestamp() WHERE id = %s", (old,))
    p2 = _pending(store, "a", "e2", "kebab case for all files")
    from worker import errors

    with pytest.raises(errors.TransientError, match="supersede hid 0 rows"):
        store.write_batch("a", [(p2, VEC)], "m", 384, lambda k: 0.5, [])
    assert store.get_event("e2")["status"] == "pending"
    assert store.query("SELECT count(*)::int AS n FROM memories WHERE namespace = 'a'")[0]["n"] == 1


def test_redelivered_event_changes_nothing(store: Store) -> None:
    p = _pending(store, "a", "e1", "some lesson")
    out1 = store.write_batch("a", [(p, VEC)], "m", 384, lambda k: 0.1, [])
    out2 = store.write_batch("a", [(p, VEC)], "m", 384, lambda k: 0.1, [])
    assert out1[0].decision == "inserted"
    assert out2[0].decision == "skipped"
    assert store.query("SELECT count(*)::int AS n FROM memories")[0]["n"] == 1


def test_namespaces_never_see_each_other(store: Store) -> None:
    _insert(store, "other", "exactly this lesson")
    p = _pending(store, "mine", "e1", "exactly this lesson")
    out = store.write_batch("mine", [(p, VEC)], "m", 384, lambda k: 0.5, [])
    # Identical text and identical vector in another namespace: still an insert here.
    assert out[0].decision == "inserted"
    assert out[0].reason == "no live memory in namespace"


def test_every_migration_applies_and_is_recorded(store: Store) -> None:
    from worker import migrations

    names = [n for _, n, _ in migrations.available()]
    rows = store.query("SELECT name FROM schema_migrations ORDER BY version")
    assert [r["name"] for r in rows] == names
    assert store.migrate() == []  # idempotent

"""DESIGN invariants enforced by the schema and the write transaction."""

from __future__ import annotations

import psycopg
import pytest
from memsieve.ops.services import EmbeddedPostgres
from memsieve.schemas.memory import content_hash
from memsieve.store.postgres import InboxEvent, Pending, Store

from tests.support import db

VEC = [1.0] + [0.0] * 383


def _insert(
    store: Store, ns: str, text: str, supersedes: str | None = None, live: bool = True
) -> str:
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


def test_supersede_of_an_already_dead_row_aborts_the_whole_batch(
    store: Store, pg_server: EmbeddedPostgres
) -> None:
    """The soft delete must touch exactly one row. Every writer bumps the namespace version
    (so the gate's cached view of live rows is reloaded), but if the target died anyway —
    here by a change that bypasses the triggers — the whole transaction is refused."""
    p1 = _pending(store, "a", "e1", "kebab case for files")
    out = store.write_batch("a", [(p1, VEC)], "m", 384, lambda k: 0.5, [])
    old = out[0].memory_id
    # Only a superuser may bypass triggers; the application role cannot.
    admin = pg_server.admin_url(store.url.rsplit("/", 1)[1])
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute("SET session_replication_role = replica")  # no triggers: no version bump
        c.execute("UPDATE memories SET deleted_at = clock_timestamp() WHERE id = %s", (old,))
    p2 = _pending(store, "a", "e2", "kebab case for all files")
    from memsieve import errors

    with pytest.raises(errors.TransientError, match="supersede hid 0 rows"):
        store.write_batch("a", [(p2, VEC)], "m", 384, lambda k: 0.5, [])
    assert store.get_event("e2")["status"] == "pending"
    assert (
        db.query(store, "SELECT count(*)::int AS n FROM memories WHERE namespace = 'a'")[0]["n"]
        == 1
    )


@pytest.fixture(params=["memory", "sql"])
def gate_search(request: pytest.FixtureRequest, store: Store) -> str:
    """Both gate paths: the in-memory batch search (default) and the per-event SQL query."""
    store.gate_search = request.param  # MEMSIEVE_GATE_SEARCH, as Pipeline passes it
    return str(request.param)


def test_redelivered_event_changes_nothing(store: Store, gate_search: str) -> None:
    p = _pending(store, "a", "e1", "some lesson")
    out1 = store.write_batch("a", [(p, VEC)], "m", 384, lambda k: 0.1, [])
    out2 = store.write_batch("a", [(p, VEC)], "m", 384, lambda k: 0.1, [])
    assert out1[0].decision == "inserted"
    assert out2[0].decision == "skipped"
    assert db.query(store, "SELECT count(*)::int AS n FROM memories")[0]["n"] == 1


def test_namespaces_never_see_each_other(store: Store, gate_search: str) -> None:
    _insert(store, "other", "exactly this lesson")
    p = _pending(store, "mine", "e1", "exactly this lesson")
    out = store.write_batch("mine", [(p, VEC)], "m", 384, lambda k: 0.5, [])
    # Identical text and identical vector in another namespace: still an insert here.
    assert out[0].decision == "inserted"
    assert out[0].reason == "no live memory in namespace"


def test_every_migration_applies_and_is_recorded(store: Store) -> None:
    from memsieve.store import migrations

    names = [n for _, n, _ in migrations.available()]
    rows = db.query(store, "SELECT name FROM schema_migrations ORDER BY version")
    assert [r["name"] for r in rows] == names
    assert store.migrate() == []  # idempotent


def test_both_gate_paths_decide_alike(store: Store, gate_search: str) -> None:
    """Insert, byte-identical merge, supersede within the threshold, insert beyond it."""
    near = [0.99, 0.141] + [0.0] * 382
    far = [0.0, 1.0] + [0.0] * 382
    p1 = _pending(store, "a", "e1", "first text")
    p2 = _pending(store, "a", "e2", "first text")
    p3 = _pending(store, "a", "e3", "first text, reworded")
    p4 = _pending(store, "a", "e4", "something else")
    out = store.write_batch(
        "a", [(p1, VEC), (p2, VEC), (p3, near), (p4, far)], "m", 384, lambda k: 0.05, []
    )
    assert [o.decision for o in out] == ["inserted", "merged", "superseded", "inserted"]
    assert out[1].memory_id == out[0].memory_id
    assert out[2].supersedes == out[0].memory_id
    live = db.query(store, "SELECT content FROM memories WHERE deleted_at IS NULL ORDER BY content")
    assert [r["content"] for r in live] == ["first text, reworded", "something else"]

"""Postgres + pgvector: the inbox, the memories and their chain, the embedding cache.

Every query is parameterised. The write path (`write_batch`) runs one transaction per
namespace batch under `pg_advisory_xact_lock(namespace)`, which is what makes the gate
correct even when a Redis lock has expired under a paused worker.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from worker import errors, faults, gate, gate_write, migrations, nsvectors

log = logging.getLogger("memsieve.store")

# "memory" (default): the gate searches the namespace's live vectors in process memory,
# one matrix product per batch (worker/gate_write.py). "sql": one exact query per event,
# the original path, kept as the benchmark's baseline and an escape hatch.
GATE_SEARCH = os.environ.get("MEMSIEVE_GATE_SEARCH", "memory")


@dataclass
class InboxEvent:
    """A row for the inbox, accepted or refused at capture."""

    event_id: str
    namespace: str | None
    kind: str | None
    heading: str | None
    content: str | None
    payload_hash: str
    status: str = "pending"  # pending | rejected | dead
    tags: list[str] = field(default_factory=list)
    occurred_at: datetime | None = None
    agent: str | None = None
    session: str | None = None
    target_memory: str | None = None
    reason: str | None = None
    detail: str | None = None


@dataclass
class Pending:
    event_id: str
    namespace: str
    kind: str
    heading: str
    content: str
    tags: list[str]
    occurred_at: datetime | None
    agent: str | None
    session: str | None
    target_memory: str | None
    attempts: int
    content_hash: str
    # Earlier claims of this event that never finished (a worker died while handling it).
    claims: int = 0


@dataclass
class Outcome:
    event_id: str
    decision: str  # inserted | superseded | merged | skipped (already terminal)
    memory_id: str | None
    supersedes: str | None
    distance: float | None
    reason: str


def to_db_text(value: str | None) -> str | None:
    """Postgres text cannot hold NUL; validation refuses it earlier, this is the last fence."""
    return None if value is None else value.replace("\x00", "\ufffd")


def _as_list(v: Any) -> list[float]:
    """A loaded vector as a list (pgvector.Vector or ndarray, by pgvector version)."""
    return np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v).tolist()


def decision_record(
    d: gate.GateDecision, ev: Pending, model: str, dims: int, k: int, guards: Sequence[gate.Guard]
) -> dict[str, Any]:
    """What the gate saw and decided, stored with the row and the event (invariant 6)."""
    record: dict[str, Any] = {
        "action": d.action,
        "reason": d.reason,
        "threshold": d.threshold,
        "distance": d.distance,
        "target": d.target,
        "embedding_model": model,
        "embedding_dims": dims,
        "neighbours_searched": k,
        "explicit_target": ev.target_memory,
        "guards": [getattr(g, "__name__", type(g).__name__) for g in guards],
        "candidates": [
            {
                "memory_id": c.memory_id,
                "distance": round(c.distance, 6),
                "within_threshold": c.within_threshold,
                "vetoes": [{"guard": v.guard, "detail": v.detail} for v in c.vetoes],
            }
            for c in d.considered
        ],
    }
    if d.action == "merge":
        # Found by content hash before any vector search: the identical row is the
        # only candidate; record it so the merge can be explained.
        record["candidates"] = [
            {"memory_id": d.target, "distance": 0.0, "within_threshold": True,
             "identical": True, "vetoes": []}
        ]  # fmt: skip
    return record


def _configure(conn: psycopg.Connection) -> None:
    register_vector(conn)


class Store:
    def __init__(self, url: str, max_size: int = 4, min_size: int = 1) -> None:
        self.url = url
        self._pool: ConnectionPool | None = None
        self._pool_pid: int | None = None
        self._pool_lock = threading.Lock()
        self.max_size = max_size
        self.min_size = min_size
        self.gate_cache = nsvectors.NamespaceCache()

    # -- connections -------------------------------------------------------------
    @property
    def pool(self) -> ConnectionPool:
        # A pool must not cross fork(): Celery's prefork children each open their own.
        with self._pool_lock:
            if self._pool is None or self._pool_pid != os.getpid():
                self._pool = ConnectionPool(
                    self.url,
                    min_size=self.min_size,
                    max_size=self.max_size,
                    configure=_configure,
                    check=ConnectionPool.check_connection,
                    open=True,
                    timeout=30,
                )
                self._pool_pid = os.getpid()
            return self._pool

    def close(self) -> None:
        if self._pool is not None and self._pool_pid == os.getpid():
            self._pool.close()
        self._pool = None

    def migrate(self) -> list[str]:
        with psycopg.connect(self.url, autocommit=True) as conn:
            return migrations.migrate(conn)

    # -- embedder binding ----------------------------------------------------------
    def bind_embedder(self, model: str, dims: int) -> None:
        """Record the store's vector space on first use; refuse a different one later."""
        with self.pool.connection() as conn:
            conn.execute(
                "INSERT INTO store_meta (key, value) VALUES ('embedder', %s) ON CONFLICT DO NOTHING",
                (json.dumps({"model": model, "dims": dims}),),
            )
            row = conn.execute("SELECT value FROM store_meta WHERE key = 'embedder'").fetchone()
        assert row is not None  # inserted above unless already there
        bound = row[0]
        if bound["model"] != model or int(bound["dims"]) != dims:
            raise errors.EmbedderMismatch(
                f"this store holds {bound['model']} vectors ({bound['dims']} d) but the worker's "
                f"embedder is {model} ({dims} d); set MEMSIEVE_EMBEDDER to match, or move the "
                f"store with `memsieve reembed --to {model}`"
            )

    @staticmethod
    def check_embedder_in_tx(cur: psycopg.Cursor[Any], model: str, dims: int) -> None:
        """Inside a write transaction: the store is still bound to this embedder.

        FOR SHARE: a re-embed cut-over (FOR UPDATE on this row) waits for this transaction,
        and this one waits for a cut-over in progress, then sees the new binding and stops.
        """
        cur.execute("SELECT value FROM store_meta WHERE key = 'embedder' FOR SHARE")
        row = cur.fetchone()
        if row is not None and (row[0]["model"] != model or int(row[0]["dims"]) != dims):
            raise errors.EmbedderMismatch(
                f"the store moved to {row[0]['model']} ({row[0]['dims']} d); this worker embeds "
                f"with {model} ({dims} d): restart it with the matching MEMSIEVE_EMBEDDER"
            )

    def bound_embedder(self) -> dict[str, Any] | None:
        with self.pool.connection() as conn:
            row = conn.execute("SELECT value FROM store_meta WHERE key = 'embedder'").fetchone()
        return row[0] if row else None

    # -- inbox -----------------------------------------------------------------------
    def insert_events(self, rows: Sequence[InboxEvent]) -> list[str]:
        """Insert into the ledger; an event id seen before is left alone. Returns new ids."""
        if not rows:
            return []
        params = [
            (
                r.event_id, to_db_text(r.namespace), r.kind, to_db_text(r.heading),
                to_db_text(r.content), [to_db_text(t) for t in r.tags], r.occurred_at,
                to_db_text(r.agent), to_db_text(r.session), r.target_memory,
                r.payload_hash, r.status, r.reason, to_db_text(r.detail), r.status != "pending",
            )
            for r in rows
        ]  # fmt: skip
        new: list[str] = []
        # One pipelined, prepared statement for the whole message (a backfill sends hundreds
        # of events per message): one round trip instead of one per row.
        with self.pool.connection() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO events (event_id, namespace, kind, heading, content, tags,"
                " occurred_at, agent, session, target_memory, payload_hash, status, reason,"
                " detail, finished_at)"
                " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,"
                " CASE WHEN %s THEN clock_timestamp() END)"
                " ON CONFLICT (event_id) DO NOTHING RETURNING event_id",
                params,
                returning=True,
            )
            while True:
                row = cur.fetchone()
                if row is not None:
                    new.append(row[0])
                if not cur.nextset():
                    break
        return new

    def get_event(self, event_id: str) -> dict[str, Any] | None:
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            cur.execute("SELECT * FROM events WHERE event_id = %s", (event_id,))
            return cur.fetchone()

    def claim_pending(
        self, namespace: str, limit: int, exclude: Sequence[str] = ()
    ) -> list[Pending]:
        """The oldest pending events of a namespace (the caller holds the namespace lock),
        leaving out `exclude` (events that already failed in this flush)."""
        from schemas.events import content_hash

        with self.pool.connection() as conn:
            rows = conn.execute(
                "SELECT event_id, namespace, kind, heading, content, tags, occurred_at, agent,"
                " session, target_memory::text, attempts, claims FROM events"
                " WHERE namespace = %s AND status = 'pending' AND NOT (event_id = ANY(%s))"
                " ORDER BY received_at, event_id LIMIT %s",
                (namespace, list(exclude), limit),
            ).fetchall()
        return [
            Pending(*r[:11], content_hash(r[3], r[4]), r[11])  # type: ignore[arg-type, call-arg]
            for r in rows
        ]

    def set_claimed(self, event_ids: Sequence[str], claimed: bool) -> None:
        """Count a flush's claim on these events (claimed=True), or clear it when the flush
        is done with them, whatever the outcome (claimed=False)."""
        if not event_ids:
            return
        with self.pool.connection() as conn:
            conn.execute(
                "UPDATE events SET claims = CASE WHEN %s THEN claims + 1 ELSE 0 END"
                " WHERE event_id = ANY(%s) AND status = 'pending'",
                (claimed, list(event_ids)),
            )

    def pending_namespaces(self, older_than_s: float = 0.0) -> list[str]:
        with self.pool.connection() as conn:
            rows = conn.execute(
                "SELECT DISTINCT namespace FROM events WHERE status = 'pending'"
                " AND received_at < clock_timestamp() - make_interval(secs => %s)",
                (older_than_s,),
            ).fetchall()
        return [r[0] for r in rows]

    def has_pending(self, namespace: str) -> bool:
        with self.pool.connection() as conn:
            row = conn.execute(
                "SELECT 1 FROM events WHERE namespace = %s AND status = 'pending' LIMIT 1",
                (namespace,),
            ).fetchone()
        return row is not None

    def fail_attempt(self, event_ids: Sequence[str], reason: str, max_attempts: int) -> list[str]:
        """Count a failed attempt; events that used up their attempts go dead. Returns those."""
        if not event_ids:
            return []
        with self.pool.connection() as conn:
            rows = conn.execute(
                "UPDATE events SET attempts = attempts + 1, updated_at = clock_timestamp(),"
                " detail = %s,"
                " status = CASE WHEN attempts + 1 >= %s THEN 'dead' ELSE status END,"
                " reason = CASE WHEN attempts + 1 >= %s THEN 'retries_exhausted' ELSE reason END,"
                " finished_at = CASE WHEN attempts + 1 >= %s THEN clock_timestamp() END"
                " WHERE event_id = ANY(%s) AND status = 'pending' RETURNING event_id, status",
                (reason, max_attempts, max_attempts, max_attempts, list(event_ids)),
            ).fetchall()
        return [r[0] for r in rows if r[1] == "dead"]

    def mark_dead(self, event_id: str, reason: str, detail: str) -> bool:
        with self.pool.connection() as conn:
            cur = conn.execute(
                "UPDATE events SET status = 'dead', reason = %s, detail = %s,"
                " updated_at = clock_timestamp(), finished_at = clock_timestamp()"
                " WHERE event_id = %s AND status = 'pending'",
                (reason, detail, event_id),
            )
            return cur.rowcount == 1

    # -- embedding cache ------------------------------------------------------------
    def cache_get_many(self, model: str, hashes: Iterable[str]) -> dict[str, list[float]]:
        keys = list(set(hashes))
        if not keys:
            return {}
        with self.pool.connection() as conn:
            rows = conn.execute(
                "SELECT content_hash, embedding FROM embedding_cache"
                " WHERE model = %s AND content_hash = ANY(%s)",
                (model, keys),
            ).fetchall()
        # pgvector >= 0.4 loads `vector` as pgvector.Vector (no .tolist()); older, ndarray.
        return {h: _as_list(v) for h, v in rows}

    def cache_put_many(self, model: str, items: dict[str, list[float]]) -> None:
        if not items:
            return
        with self.pool.connection() as conn, conn.cursor() as cur:
            cur.executemany(
                # Binary: the text form formats 1,536 floats per row in Python.
                "INSERT INTO embedding_cache (model, content_hash, embedding) VALUES (%s, %s, %b)"
                " ON CONFLICT DO NOTHING",
                # Sorted: concurrent workers caching overlapping texts take the keys' row
                # locks in one order, so they cannot deadlock.
                [(model, h, np.asarray(v, dtype=np.float32)) for h, v in sorted(items.items())],
            )

    # -- the gate's write ---------------------------------------------------------------
    def write_batch(
        self,
        namespace: str,
        items: Sequence[tuple[Pending, list[float]]],
        model: str,
        dims: int,
        threshold_for: Callable[[str], float],
        guards: Sequence[gate.Guard],
        k: int = 3,
        now: datetime | None = None,
    ) -> list[Outcome]:
        """Run the gate for each event in order, in one transaction for the namespace.

        `now` (replays and tests only) is the time the batch is written at: new rows get it
        as created_at, superseded rows as deleted_at. Without it, the database clock.
        """
        outcomes: list[Outcome] = []
        with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended('memsieve:ns:' || %s, 0))",
                (namespace,),
            )
            self.check_embedder_in_tx(cur, model, dims)
            faults.pause("write", namespace, len(items))
            if now is not None:
                # Read by memsieve_now(), the created_at default (migration 040).
                cur.execute("SELECT set_config('memsieve.now', %s, true)", (now.isoformat(),))
            if GATE_SEARCH == "sql":
                for ev, vector in items:
                    outcomes.append(
                        self._write_one(cur, ev, np.asarray(vector, dtype=np.float32), model, dims,
                                        threshold_for(ev.kind), guards, k)
                    )  # fmt: skip
                return outcomes
            outcomes, install = gate_write.write_batch(
                cur, self.gate_cache, namespace, items, model, dims, threshold_for, guards, k,
                decision_record,
            )  # fmt: skip
        install()  # committed: the process's copy of the namespace may move forward
        return outcomes

    def _write_one(
        self,
        cur: psycopg.Cursor[Any],
        ev: Pending,
        vec: np.ndarray,
        model: str,
        dims: int,
        threshold: float,
        guards: Sequence[gate.Guard],
        k: int,
    ) -> Outcome:
        cur.execute(
            "SELECT status, decision, memory_id::text, supersedes::text, distance, reason"
            " FROM events WHERE event_id = %s FOR UPDATE",
            (ev.event_id,),
        )
        row = cur.fetchone()
        if row is None or row[0] != "pending":
            # Redelivered or already handled by another worker: change nothing.
            return Outcome(ev.event_id, "skipped", row[2] if row else None, None, None, "not pending")

        cur.execute(
            "SELECT id::text, kind, heading, content, content_hash, 0.0::float8 FROM memories"
            " WHERE namespace = %s AND content_hash = %s AND deleted_at IS NULL",
            (ev.namespace, ev.content_hash),
        )
        rows = cur.fetchall()
        if not rows:
            cur.execute(
                "SELECT id::text, kind, heading, content, content_hash,"
                " (embedding <=> %s)::float8 AS distance FROM memories"
                " WHERE namespace = %s AND deleted_at IS NULL AND embedding_model = %s"
                " ORDER BY embedding <=> %s LIMIT %s",
                (vec, ev.namespace, model, vec, k),
            )
            rows = cur.fetchall()
            if ev.target_memory and ev.target_memory not in {r[0] for r in rows}:
                cur.execute(
                    "SELECT id::text, kind, heading, content, content_hash,"
                    " (embedding <=> %s)::float8 FROM memories"
                    " WHERE id = %s AND namespace = %s AND deleted_at IS NULL",
                    (vec, ev.target_memory, ev.namespace),
                )
                rows += cur.fetchall()
        candidates = [gate.Candidate(*r) for r in rows]
        incoming = gate.Incoming(
            ev.namespace, ev.kind, ev.heading, ev.content, ev.content_hash, ev.target_memory
        )
        d = gate.decide(incoming, candidates, threshold, guards)
        record = decision_record(d, ev, model, dims, k, guards)

        if d.action == "merge":
            assert d.target is not None
            self._finish(cur, ev.event_id, "merged", d.target, None, 0.0, d.reason, record)
            return Outcome(ev.event_id, "merged", d.target, None, 0.0, d.reason)

        supersedes = d.target if d.action == "supersede" else None
        # Insert first, then soft-delete: if the insert fails the old row is intact.
        cur.execute(
            "INSERT INTO memories (namespace, kind, heading, content, tags, content_hash,"
            " embedding, embedding_model, embedding_dims, supersedes, event_id, agent, session,"
            " occurred_at, decision)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"
            " RETURNING id::text, created_at",
            (
                ev.namespace, ev.kind, ev.heading, ev.content, ev.tags, ev.content_hash, vec,
                model, dims, supersedes, ev.event_id, ev.agent, ev.session, ev.occurred_at,
                json.dumps(record),
            ),
        )  # fmt: skip
        new_id, created_at = cur.fetchone()  # type: ignore[misc]
        if supersedes is not None:
            cur.execute(
                "UPDATE memories SET deleted_at = %s WHERE id = %s AND deleted_at IS NULL",
                (created_at, supersedes),
            )
            if cur.rowcount != 1:
                # Invariant 2: the soft delete must touch exactly one row; anything else
                # means the chain would fork. Abort the whole transaction.
                raise errors.TransientError(
                    f"supersede of {supersedes} touched {cur.rowcount} rows; retrying"
                )
            decision = "superseded"
        else:
            decision = "inserted"
        self._finish(cur, ev.event_id, decision, new_id, supersedes, d.distance, d.reason, record)
        return Outcome(ev.event_id, decision, new_id, supersedes, d.distance, d.reason)

    @staticmethod
    def _finish(
        cur: psycopg.Cursor[Any],
        event_id: str,
        decision: str,
        memory_id: str,
        supersedes: str | None,
        distance: float | None,
        reason: str,
        record: dict[str, Any],
    ) -> None:
        cur.execute(
            "UPDATE events SET status = 'written', decision = %s, memory_id = %s,"
            " supersedes = %s, distance = %s, reason = %s, decision_record = %s,"
            " updated_at = clock_timestamp(), finished_at = clock_timestamp()"
            " WHERE event_id = %s",
            (decision, memory_id, supersedes, distance, reason, json.dumps(record), event_id),
        )

    # -- reads ------------------------------------------------------------------------
    def recall(
        self, namespace: str, vector: list[float], model: str, k: int = 5
    ) -> list[dict[str, Any]]:
        vec = np.asarray(vector, dtype=np.float32)
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            cur.execute(
                "SELECT id::text AS memory_id, kind, heading, content, tags, created_at,"
                " (embedding <=> %s)::float8 AS distance FROM memories"
                " WHERE namespace = %s AND deleted_at IS NULL AND embedding_model = %s"
                " ORDER BY embedding <=> %s LIMIT %s",
                (vec, namespace, model, vec, k),
            )
            return cur.fetchall()

    def get_memory(self, memory_id: str) -> dict[str, Any] | None:
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            try:
                cur.execute(
                    "SELECT id::text AS memory_id, namespace, kind, heading, content, tags,"
                    " content_hash, embedding_model, embedding_dims, supersedes::text AS supersedes,"
                    " event_id, created_at, deleted_at, decision FROM memories WHERE id = %s",
                    (memory_id,),
                )
            except psycopg.errors.InvalidTextRepresentation:
                return None
            return cur.fetchone()

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """The chain from this memory back to its first version, newest first."""
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            try:
                cur.execute(
                    "WITH RECURSIVE chain AS ("
                    "  SELECT m.*, 0 AS depth FROM memories m WHERE m.id = %s"
                    "  UNION ALL"
                    "  SELECT p.*, c.depth + 1 FROM memories p JOIN chain c ON p.id = c.supersedes"
                    "  WHERE c.depth < 10000"
                    ") SELECT id::text AS memory_id, namespace, kind, heading, content,"
                    " supersedes::text AS supersedes, event_id, created_at, deleted_at,"
                    " decision FROM chain ORDER BY depth",
                    (memory_id,),
                )
            except psycopg.errors.InvalidTextRepresentation:
                return []
            return cur.fetchall()

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Read-only helper for the CLI and tests (SQL is a literal of the caller's)."""
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            cur.execute(sql, params)  # type: ignore[arg-type]
            return cur.fetchall()

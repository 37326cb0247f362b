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
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from memsieve import errors
from memsieve.gate import batch, vectors
from memsieve.gate.decide import Guard
from memsieve.gate.judge import Judge
from memsieve.store import gate_write, migrations, recall
from memsieve.store.rows import InboxEvent, Outcome, Pending, to_db_text
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

log = logging.getLogger("memsieve.store")

# MEMSIEVE_GATE_SEARCH: "memory" (default): the gate searches the namespace's live vectors in
# process memory, one matrix product per batch (worker/store/gate_write.py). "sql": the
# candidates come from one exact query per event (worker/store/gate_sql.py), the benchmarks'
# baseline and an escape hatch; both feed the one batch gate (worker/gate/batch.py).


def _as_list(v: Any) -> list[float]:
    """A loaded vector as a list (pgvector.Vector or ndarray, by pgvector version)."""
    return np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v).tolist()


def _configure(conn: psycopg.Connection) -> None:
    register_vector(conn)


class Store:
    def __init__(
        self,
        url: str,
        max_size: int = 4,
        min_size: int = 1,
        *,
        gate_search: str = "memory",
        cache_mb: float = vectors.CACHE_MB,
    ) -> None:
        self.url = url
        self._pool: ConnectionPool | None = None
        self._pool_pid: int | None = None
        self._pool_lock = threading.Lock()
        self.max_size = max_size
        self.min_size = min_size
        # MEMSIEVE_GATE_SEARCH: memory (the cached live set) or sql (one query per event).
        self.gate_search = gate_search
        self.gate_cache = vectors.NamespaceCache(cache_mb)

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
    def insert_events(self, rows: Sequence[InboxEvent]) -> list[tuple[str, str]]:
        """Insert into the ledger; a (namespace, event id) seen before is left alone.
        Returns the keys inserted: (namespace or "", event id)."""
        if not rows:
            return []
        params = [
            (
                r.event_id,
                to_db_text(r.namespace),
                r.kind,
                to_db_text(r.heading),
                to_db_text(r.content),
                [to_db_text(t) for t in r.tags],
                r.occurred_at,
                to_db_text(r.agent),
                to_db_text(r.session),
                r.target_memory,
                r.payload_hash,
                r.status,
                r.reason,
                to_db_text(r.detail),
                r.reused_id,
                r.status != "pending",
            )
            for r in rows
        ]
        new: list[tuple[str, str]] = []
        # One pipelined, prepared statement for the whole message (a backfill sends hundreds
        # of events per message): one round trip instead of one per row.
        with self.pool.connection() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO events (event_id, namespace, kind, heading, content, tags,"
                " occurred_at, agent, session, target_memory, payload_hash, status, reason,"
                " detail, reused_id, finished_at)"
                " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,"
                " CASE WHEN %s THEN clock_timestamp() END)"
                " ON CONFLICT (ns_key, event_id) DO NOTHING RETURNING ns_key, event_id",
                params,
                returning=True,
            )
            while True:
                row = cur.fetchone()
                if row is not None:
                    new.append((row[0], row[1]))
                if not cur.nextset():
                    break
        return new

    def payload_hashes(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """The recorded payload hash of each (namespace or "", event id) that exists."""
        if not keys:
            return {}
        with self.pool.connection() as conn:
            rows = conn.execute(
                "SELECT ns_key, event_id, payload_hash FROM events"
                " WHERE (ns_key, event_id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
                ([ns for ns, _ in keys], [eid for _, eid in keys]),
            ).fetchall()
        return {(r[0], r[1]): r[2] for r in rows}

    def get_event(
        self, event_id: str, namespace: str | None | object = ...
    ) -> dict[str, Any] | None:
        """The ledger row of `event_id` in `namespace` (None: the rows of no namespace);
        without `namespace`, the first row of that id (ids are per namespace)."""
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            if namespace is ...:
                cur.execute(
                    "SELECT * FROM events WHERE event_id = %s ORDER BY received_at LIMIT 1",
                    (event_id,),
                )
            else:
                cur.execute(
                    "SELECT * FROM events WHERE ns_key = coalesce(%s, '') AND event_id = %s",
                    (namespace, event_id),
                )
            return cur.fetchone()

    def claim_pending(
        self, namespace: str, limit: int, exclude: Sequence[str] = ()
    ) -> list[Pending]:
        """The oldest pending events of a namespace (the caller holds the namespace lock),
        leaving out `exclude` (events that already failed in this flush)."""
        from memsieve.schemas.events import content_hash

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

    def bury_unloadable(self, namespace: str) -> list[str]:
        """Pending events of `namespace` whose row cannot be loaded (a value written before
        validation refused it, e.g. a date past year 9999 in this session's time zone) go
        dead with a reason, so that they never block their namespace. Returns their ids."""
        with self.pool.connection() as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT event_id FROM events WHERE namespace = %s AND status = 'pending'",
                    (namespace,),
                ).fetchall()
            ]
        dead: list[str] = []
        for eid in ids:
            try:
                with self.pool.connection() as conn:
                    conn.execute(
                        "SELECT event_id, namespace, kind, heading, content, tags, occurred_at,"
                        " agent, session, target_memory::text FROM events"
                        " WHERE ns_key = %s AND event_id = %s",
                        (namespace, eid),
                    ).fetchall()
            except psycopg.DataError as exc:
                # Here, not at import: the read commands need no pydantic.
                from memsieve.schemas.events import OCCURRED_MAX, OCCURRED_MIN

                with self.pool.connection() as conn:
                    # A date out of the loadable range is moved to the detail (as text), so
                    # that the row can be read by `events` and `explain`.
                    cur = conn.execute(
                        "UPDATE events SET status = 'dead', reason = 'unloadable_row',"
                        " detail = %s || coalesce(' (occurred_at was '"
                        "   || (occurred_at AT TIME ZONE 'UTC')::text || ' UTC)', ''),"
                        " occurred_at = CASE WHEN occurred_at BETWEEN %s AND %s"
                        "   THEN occurred_at END,"
                        " updated_at = clock_timestamp(), finished_at = clock_timestamp()"
                        " WHERE ns_key = %s AND event_id = %s AND status = 'pending'",
                        (
                            f"its stored row cannot be loaded: {type(exc).__name__}",
                            OCCURRED_MIN,
                            OCCURRED_MAX,
                            namespace,
                            eid,
                        ),
                    )
                if cur.rowcount == 1:
                    dead.append(eid)
        return dead

    def set_claimed(self, namespace: str, event_ids: Sequence[str], claimed: bool) -> None:
        """Count a flush's claim on these events (claimed=True), or clear it when the flush
        is done with them, whatever the outcome (claimed=False)."""
        if not event_ids:
            return
        with self.pool.connection() as conn:
            conn.execute(
                "UPDATE events SET claims = CASE WHEN %s THEN claims + 1 ELSE 0 END"
                " WHERE ns_key = %s AND event_id = ANY(%s) AND status = 'pending'",
                (claimed, namespace, list(event_ids)),
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

    def fail_attempt(
        self, namespace: str, event_ids: Sequence[str], reason: str, max_attempts: int
    ) -> list[str]:
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
                " WHERE ns_key = %s AND event_id = ANY(%s) AND status = 'pending'"
                " RETURNING event_id, status",
                (reason, max_attempts, max_attempts, max_attempts, namespace, list(event_ids)),
            ).fetchall()
        return [r[0] for r in rows if r[1] == "dead"]

    def mark_dead(self, namespace: str, event_id: str, reason: str, detail: str) -> bool:
        with self.pool.connection() as conn:
            cur = conn.execute(
                "UPDATE events SET status = 'dead', reason = %s, detail = %s,"
                " updated_at = clock_timestamp(), finished_at = clock_timestamp()"
                " WHERE ns_key = %s AND event_id = %s AND status = 'pending'",
                (reason, detail, namespace, event_id),
            )
            return cur.rowcount == 1

    def refuse_pending(self, namespace: str, event_id: str, reason: str, detail: str) -> bool:
        """A pending event refused at flush time (e.g. its `supersedes` names no memory)."""
        with self.pool.connection() as conn:
            cur = conn.execute(
                "UPDATE events SET status = 'rejected', reason = %s, detail = %s,"
                " updated_at = clock_timestamp(), finished_at = clock_timestamp()"
                " WHERE ns_key = %s AND event_id = %s AND status = 'pending'",
                (reason, detail, namespace, event_id),
            )
            return cur.rowcount == 1

    def retarget(self, namespace: str, event_id: str, memory_id: str) -> None:
        """Record the live memory a pending event's `supersedes` was resolved to."""
        with self.pool.connection() as conn:
            conn.execute(
                "UPDATE events SET target_memory = %s, updated_at = clock_timestamp()"
                " WHERE ns_key = %s AND event_id = %s AND status = 'pending'",
                (memory_id, namespace, event_id),
            )

    def live_successors(self, namespace: str, memory_ids: Sequence[str]) -> dict[str, str]:
        """For each id of a memory of `namespace`: itself if live, else the live end of the
        chain that superseded it. Ids of no memory of the namespace, and chains that end in
        a deleted row (a revert), are absent."""
        if not memory_ids:
            return {}
        with self.pool.connection() as conn:
            rows = conn.execute(
                "WITH RECURSIVE chain(start, id, dead, depth) AS ("
                " SELECT m.id, m.id, m.deleted_at IS NOT NULL, 0 FROM memories m"
                "  WHERE m.id = ANY(%s::uuid[]) AND m.namespace = %s"
                " UNION ALL"
                " SELECT c.start, n.id, n.deleted_at IS NOT NULL, c.depth + 1"
                "  FROM chain c JOIN memories n ON n.supersedes = c.id"
                "  WHERE c.dead AND c.depth < 100000)"
                " SELECT start::text, id::text FROM chain WHERE NOT dead",
                (list(memory_ids), namespace),
            ).fetchall()
        return {r[0]: r[1] for r in rows}

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
        items: Sequence[tuple[Pending, npt.ArrayLike]],
        model: str,
        dims: int,
        threshold_for: Callable[[str], float],
        guards: Sequence[Guard],
        k: int = 3,
        now: datetime | None = None,
        judge: Judge | None = None,
        on_conflict: str = "keep",
    ) -> list[Outcome]:
        """Run the gate for each event in order, in one transaction for the namespace.

        `now` (replays and tests only) is the time the batch is written at: new rows get it
        as created_at, superseded rows as deleted_at. Without it, the database clock.
        `judge` (default: the guards as a judge) and `on_conflict` (keep | newest): see
        `memsieve.gate.batch.GateConfig`.
        """
        config = batch.GateConfig(
            threshold_for, k, tuple(guards), judge, on_conflict, model=model, dims=dims
        )
        with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended('memsieve:ns:' || %s, 0))",
                (namespace,),
            )
            self.check_embedder_in_tx(cur, model, dims)
            if now is not None:
                # Read by memsieve_now(), the created_at default (migration 040).
                cur.execute("SELECT set_config('memsieve.now', %s, true)", (now.isoformat(),))
            outcomes, install = gate_write.write_batch(
                cur,
                self.gate_cache,
                namespace,
                items,
                config,
                search=self.gate_search,
            )
        install()  # committed: the process's copy of the namespace may move forward
        return outcomes

    # -- reads ------------------------------------------------------------------------
    def recall(
        self, namespace: str, vector: npt.ArrayLike, model: str, k: int = 5
    ) -> list[dict[str, Any]]:
        """The k nearest live memories, each with its open conflicts marked (the newer
        member of a conflict first, brought in if it was not among them: store/recall.py)."""
        vec = np.asarray(vector, dtype=np.float32)
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            cur.execute(
                f"SELECT {recall.RECALL_COLUMNS} FROM memories"  # noqa: S608 - a constant
                " WHERE namespace = %s AND deleted_at IS NULL AND embedding_model = %s"
                " ORDER BY embedding <=> %s LIMIT %s",
                (vec, namespace, model, vec, k),
            )
            return recall.mark_conflicts(cur, cur.fetchall(), vec, model)

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

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Read-only helper for the CLI and tests (SQL is a literal of the caller's)."""
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            cur.execute(sql, params)  # type: ignore[arg-type]
            return cur.fetchall()

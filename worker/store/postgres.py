"""Postgres + pgvector: the store. Its statements are named queries (sql/queries.sql).

`Store` is three parts: connections and error mapping (store/connect.py), the inbox
(store/inbox.py), reads for the CLI, MCP and history (store/reads.py); this module adds the
embedder binding, the embedding cache, the gate's write and recall. The write path
(`write_batch`) runs one transaction per namespace batch under `pg_advisory_xact_lock
(namespace)`, which is what makes the gate correct even when a Redis lock has expired under
a paused worker.
"""

from __future__ import annotations

import json
import logging
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
from memsieve.store import dberrors, gate_write, migrations, queries, recall
from memsieve.store.inbox import Inbox
from memsieve.store.reads import Reads
from memsieve.store.rows import InboxEvent, Outcome, Pending

log = logging.getLogger("memsieve.store")

__all__ = ["InboxEvent", "Outcome", "Pending", "Store"]

# MEMSIEVE_GATE_SEARCH: "memory" (default): the gate searches the namespace's live vectors in
# process memory, one matrix product per batch (worker/store/gate_write.py). "sql": the
# candidates come from one exact query per event (worker/store/gate_sql.py), the benchmarks'
# baseline and an escape hatch; both feed the one batch gate (worker/gate/batch.py).


def _as_list(v: Any) -> list[float]:
    """A loaded vector as a list (pgvector.Vector or ndarray, by pgvector version)."""
    return np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v).tolist()


class Store(Inbox, Reads):
    def __init__(
        self,
        url: str,
        max_size: int = 4,
        min_size: int = 1,
        *,
        gate_search: str = "memory",
        cache_mb: float = vectors.CACHE_MB,
    ) -> None:
        super().__init__(url, max_size, min_size)
        # MEMSIEVE_GATE_SEARCH: memory (the cached live set) or sql (one query per event).
        self.gate_search = gate_search
        self.gate_cache = vectors.NamespaceCache(cache_mb)

    def migrate(self) -> list[str]:
        # Its own connection: the pool's configure step needs the vector type to exist.
        with dberrors.mapped(), psycopg.connect(self.url, autocommit=True) as conn:
            return migrations.migrate(conn)

    # -- embedder binding ----------------------------------------------------------
    def bind_embedder(self, model: str, dims: int) -> None:
        """Record the store's vector space on first use; refuse a different one later."""
        with self.connection() as conn, conn.cursor() as cur:
            queries.execute(cur, "bind_embedder", (json.dumps({"model": model, "dims": dims}),))
            row = queries.one(cur, "bound_embedder")
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
        row = queries.one(cur, "bound_embedder_for_share")
        if row is not None and (row[0]["model"] != model or int(row[0]["dims"]) != dims):
            raise errors.EmbedderMismatch(
                f"the store moved to {row[0]['model']} ({row[0]['dims']} d); this worker embeds "
                f"with {model} ({dims} d): restart it with the matching MEMSIEVE_EMBEDDER"
            )

    def bound_embedder(self) -> dict[str, Any] | None:
        rows = self.rows("bound_embedder")
        return rows[0]["value"] if rows else None

    # -- embedding cache ------------------------------------------------------------
    def cache_get_many(self, model: str, hashes: Iterable[str]) -> dict[str, list[float]]:
        keys = list(set(hashes))
        if not keys:
            return {}
        with self.connection() as conn, conn.cursor() as cur:
            rows = queries.all(cur, "cache_get", (model, keys))
        # pgvector >= 0.4 loads `vector` as pgvector.Vector (no .tolist()); older, ndarray.
        return {h: _as_list(v) for h, v in rows}

    def cache_has(self, model: str, hashes: Iterable[str]) -> set[str]:
        """Which of `hashes` the embedding cache holds for `model` (no vectors read)."""
        keys = list(set(hashes))
        if not keys:
            return set()
        with self.connection() as conn, conn.cursor() as cur:
            return {r[0] for r in queries.all(cur, "cache_has", (model, keys))}

    def cache_put_many(self, model: str, items: dict[str, list[float]]) -> None:
        if not items:
            return
        with self.connection() as conn, conn.cursor() as cur:
            cur.executemany(
                queries.QUERIES["cache_put"],
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
        with self.connection() as conn, conn.transaction(), conn.cursor() as cur:
            queries.execute(cur, "lock_namespace", (namespace,))
            self.check_embedder_in_tx(cur, model, dims)
            if now is not None:
                # Read by memsieve_now(), the created_at default (migration 040).
                queries.execute(cur, "set_now", (now.isoformat(),))
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
        with self.reading() as cur:
            rows = queries.all(cur, "recall", {"v": vec, "ns": namespace, "model": model, "k": k})
            return recall.mark_conflicts(cur, rows, vec, model)

    def get_memory(self, memory_id: str) -> dict[str, Any] | None:
        with self.reading() as cur:
            try:
                return queries.one(cur, "get_memory", (memory_id,))  # type: ignore[no-any-return]
            except psycopg.errors.InvalidTextRepresentation:
                return None

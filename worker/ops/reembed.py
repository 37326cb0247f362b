"""Move a store to a new embedder without a moment where recall mixes vector spaces.

1. **Stage** (resumable, writers keep running): every memory, live or not (a revert can
   bring an old row back), is embedded with the new embedder in batches into
   `reembed_staging` (migration 060). A row already staged for the target is skipped, so
   an interrupted run picks up where it stopped; the embedding cache means re-running
   costs no API call either.
2. **Cut over** (one short transaction): lock the `store_meta` embedder row FOR UPDATE —
   every write transaction holds it FOR SHARE (see `Store.check_embedder_in_tx`), so
   in-flight writes finish first and new ones wait — embed the few rows written since
   staging, swap every row's vector, model and dims from the staging table, and rebind
   the store. Before the commit every reader sees only the old space, after it only the
   new one; a worker still on the old embedder then refuses to write (EmbedderMismatch)
   and its events wait, pending, for a worker with the new one.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import psycopg
from memsieve import errors
from memsieve.embedders.base import Embedder
from memsieve.flow import embed
from memsieve.schemas.memory import memory_text
from memsieve.store import dberrors
from memsieve.store.postgres import Store
from memsieve.store.queries import QUERIES

log = logging.getLogger("memsieve.reembed")


@dataclass
class ReembedResult:
    source: str | None
    target: str
    total: int
    staged_now: int
    already_staged: int
    stragglers: int
    dead_inputs: int
    switched: bool


def _pending_rows(
    conn: psycopg.Connection, model: str, limit: int, skip: set[str] | None = None
) -> list[tuple[str, str, str, str]]:
    return conn.execute(QUERIES["reembed_todo"], (model, sorted(skip or ()), limit)).fetchall()


def _stage(
    conn: psycopg.Connection,
    embedder: Embedder,
    store: Store,
    rows: list[tuple[str, str, str, str]],
) -> tuple[int, list[str]]:
    """Embed `rows` with the new embedder and stage them. Returns (staged, refused ids)."""
    items = [(h, memory_text(head, content)) for _, head, content, h in rows]
    outcomes = embed.embed_items(embedder, store, items)
    staged, refused = [], []
    for (mid, *_), out in zip(rows, outcomes, strict=True):
        if isinstance(out, embed.EmbedFailure):
            if not out.permanent:
                raise errors.TransientError(f"embedding provider unavailable: {out.message}")
            refused.append(mid)
            log.error("memory %s cannot be embedded by %s: %s", mid, embedder.model, out.reason)
            continue
        staged.append((mid, embedder.model, embedder.dims, np.asarray(out, dtype=np.float32)))
    with conn.cursor() as cur:
        cur.executemany(QUERIES["reembed_stage"], staged)
    return len(staged), refused


def reembed(
    store: Store,
    embedder: Embedder,
    batch_size: int = 256,
    progress: Callable[[int, int], None] | None = None,
) -> ReembedResult:
    """Re-embed every memory with `embedder` and switch the store to it atomically."""
    bound = store.bound_embedder()
    source = bound["model"] if bound else None
    with dberrors.mapped(), psycopg.connect(store.url, autocommit=True) as conn:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        total = conn.execute(QUERIES["memory_count"]).fetchone()[0]  # type: ignore[index]
        already = conn.execute(QUERIES["reembed_staged_count"], (embedder.model,)).fetchone()[0]  # type: ignore[index]
        done, refused_ids = already, set[str]()
        if progress:
            progress(done, total)
        while True:
            # Refused rows are skipped for the rest of this run (retried by the next one).
            rows = _pending_rows(conn, embedder.model, batch_size, refused_ids)
            if not rows:
                break
            staged, refused = _stage(conn, embedder, store, rows)
            done += staged
            refused_ids.update(refused)
            if progress:
                progress(done, total)
        dead = len(refused_ids)
        if dead:
            raise errors.PermanentError(
                f"{dead} memories could not be embedded by {embedder.model}; the store was "
                "not switched (see the log for their ids)"
            )
        stragglers = _cut_over(conn, store, embedder)
    log.info("store moved from %s to %s (%d memories)", source, embedder.model, total)
    return ReembedResult(
        source, embedder.model, total, done - already, already, stragglers, dead, True
    )


def _cut_over(conn: psycopg.Connection, store: Store, embedder: Embedder) -> int:
    with conn.transaction():
        # Waits for every write transaction in flight (they hold this row FOR SHARE) and
        # holds new ones until the switch is committed.
        conn.execute(QUERIES["bound_embedder_for_update"])
        stragglers = 0
        while True:
            rows = _pending_rows(conn, embedder.model, 256)
            if not rows:
                break
            staged, refused = _stage(conn, embedder, store, rows)
            if refused:
                raise errors.PermanentError("a memory written during the move cannot be embedded")
            stragglers += staged
        conn.execute(QUERIES["reembed_switch"], (embedder.model,))
        binding = json.dumps({"model": embedder.model, "dims": embedder.dims})
        conn.execute(QUERIES["rebind_embedder"], (binding,))
        conn.execute(QUERIES["reembed_clear"], (embedder.model,))
    return stragglers

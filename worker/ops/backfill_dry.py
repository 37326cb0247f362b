"""`backfill --dry-run`: what the capture policy and the gate would do, without writing.

The real code runs (Pipeline.parse via accept, the embedding step, Store.write_batch with
the gate), inside one Postgres transaction that is always rolled back. Vectors are computed
before the first write, so the namespace's advisory lock is held only for the database
work; the embedding cache is read but what it would add is rolled back too. Nothing
touches Redis or the broker.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import psycopg
from memsieve.flow import embed
from memsieve.ops.backfill import Item, Summary, ledger_rows, unique
from memsieve.schemas import memory
from memsieve.settings import Settings
from memsieve.store.connect import _configure
from memsieve.store.postgres import Store


class _OneConnection:
    """Stands in for the store's pool: every `connection()` is the same open transaction."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        yield self.conn


def dry_run(
    settings: Settings, items: Sequence[Item], embedder: Any = None
) -> tuple[Summary, Summary]:
    """(already in the ledger, what the rest would become). Writes nothing."""
    from memsieve.flow.pipeline import Pipeline

    todo = unique(items)
    done = Summary()
    base = Store(settings.database_url or "", max_size=1)
    try:
        rows = ledger_rows(base, todo)
    finally:
        base.close()
    for _, r in rows:
        done.add(r["status"], r["decision"], r["reason"])
    done.events = len(rows)
    known = {it.key for it, _ in rows}
    fresh = [i for i in todo if i.key not in known]
    would = Summary(items=len(items), events=len(fresh))
    if not fresh:
        return done, would

    decisions = logging.getLogger("memsieve.decision")
    level = decisions.level
    decisions.setLevel(logging.WARNING)  # a dry run decides nothing worth a log line
    with psycopg.connect(settings.database_url or "") as conn:
        _configure(conn)
        store = Store(settings.database_url or "")
        store._pool, store._pool_pid = _OneConnection(conn), os.getpid()  # type: ignore[assignment]
        # The pipeline is used for parse/policy/threshold/guards only: Redis is never contacted.
        nowhere = replace(settings, redis_url=settings.redis_url or "redis://127.0.0.1:1/0")
        pipe = Pipeline(nowhere, store=store, embedder=embedder)
        try:
            with conn.transaction(force_rollback=True):
                pipe.ensure_bound()
                accepted = pipe.accept([i.payload for i in fresh])
                for a in accepted:
                    if a.status == "rejected":
                        would.add("rejected", None, a.reason)
                ours = {a.event_id for a in accepted if a.status == "pending"}
                for ns in sorted(
                    {a.namespace for a in accepted if a.status == "pending" and a.namespace}
                ):
                    _decide(pipe, store, ns, ours, would)
        finally:
            decisions.setLevel(level)
            pipe.redis.close()
    return done, would


def _decide(pipe: Any, store: Store, namespace: str, ours: set[str], would: Summary) -> None:
    emb = pipe.embedder
    # Events already pending from other producers are left to the workers.
    pending = [p for p in store.claim_pending(namespace, 10**9) if p.event_id in ours]
    vectors = embed.embed_items(
        emb, store, [(p.content_hash, memory.memory_text(p.heading, p.content)) for p in pending]
    )
    ready = []
    for p, v in zip(pending, vectors, strict=True):
        if isinstance(v, embed.EmbedFailure):
            would.add("dead", None, v.reason)
        else:
            ready.append((p, v))
    size = pipe.settings.batch_size
    for start in range(0, len(ready), size):
        for o in pipe.gate_write(namespace, ready[start : start + size]):
            would.add("written", o.decision, None)

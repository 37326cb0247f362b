"""The gate's per-event SQL path (MEMSIEVE_GATE_SEARCH=sql): one exact nearest-neighbour
query per event inside the write transaction.

The default path (worker/store/gate_write.py) scores a whole batch against the namespace's live
vectors held in worker memory; this one is the straightforward implementation, kept as the
benchmarks' baseline and as an escape hatch, and tested against the same invariants.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from memsieve import errors
from memsieve.gate.decide import Candidate, Guard, Incoming, decide, decision_record
from memsieve.store.rows import Outcome, Pending


def write_one(
    cur: psycopg.Cursor[Any],
    ev: Pending,
    vec: np.ndarray,
    model: str,
    dims: int,
    threshold: float,
    guards: Sequence[Guard],
    k: int,
) -> Outcome:
    cur.execute(
        "SELECT status, decision, memory_id::text, supersedes::text, distance, reason"
        " FROM events WHERE ns_key = %s AND event_id = %s FOR UPDATE",
        (ev.namespace, ev.event_id),
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
    candidates = [Candidate(*r) for r in rows]
    incoming = Incoming(
        ev.namespace, ev.kind, ev.heading, ev.content, ev.content_hash, ev.target_memory
    )
    d = decide(incoming, candidates, threshold, guards)
    record = decision_record(d, ev, model, dims, k, guards)

    if d.action == "merge":
        assert d.target is not None
        _finish(cur, ev.namespace, ev.event_id, "merged", d.target, None, 0.0, d.reason, record)
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
            ev.namespace,
            ev.kind,
            ev.heading,
            ev.content,
            ev.tags,
            ev.content_hash,
            vec,
            model,
            dims,
            supersedes,
            ev.event_id,
            ev.agent,
            ev.session,
            ev.occurred_at,
            json.dumps(record),
        ),
    )
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
    _finish(
        cur, ev.namespace, ev.event_id, decision, new_id, supersedes, d.distance, d.reason, record
    )
    return Outcome(ev.event_id, decision, new_id, supersedes, d.distance, d.reason)


def _finish(
    cur: psycopg.Cursor[Any],
    namespace: str,
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
        " WHERE ns_key = %s AND event_id = %s",
        (
            decision,
            memory_id,
            supersedes,
            distance,
            reason,
            json.dumps(record),
            namespace,
            event_id,
        ),
    )

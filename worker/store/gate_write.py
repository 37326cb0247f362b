"""The gate's write for one namespace batch: one search pass, few round trips.

Runs inside `Store.write_batch`'s transaction, after `pg_advisory_xact_lock(namespace)`.
Per batch, not per event:

1. the batch's events are locked and read in one statement (redeliveries are skipped);
2. the namespace's live vectors come from the process cache when its version matches
   the database's (`memsieve.gate.vectors`), else from one binary query;
3. the pure batch gate (`memsieve.gate.batch.gate`) decides every event in order, each
   seeing the rows that earlier events of the batch inserted or hid, and returns the
   decisions as values;
4. `apply` writes them in pipelined `executemany` (prepared statements): inserts first,
   then the conflicts they open, then one soft-delete statement per closing reason whose
   row count must equal the supersedes (invariant 2), then the ledger. An insert whose
   content hash belongs to a row this segment is about to hide waits for that hide (the
   partial unique index of invariant 1 would refuse it).

The caller installs the batch's changes into the cache only after commit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import psycopg
from memsieve import errors
from memsieve.gate import batch, vectors
from memsieve.gate.decide import Candidate
from memsieve.store import gate_load, gate_sql
from memsieve.store.queries import QUERIES
from memsieve.store.rows import Outcome

INSERT_MEMORY = QUERIES["insert_memory"]
HIDE_SUPERSEDED = QUERIES["hide_superseded"]
OPEN_CONFLICT = QUERIES["open_conflict"]
OPEN_CONFLICT_MEMBERS = QUERIES["open_conflict_members"]
FINISH_EVENT = QUERIES["finish_event"]


# A namespace too large for the cache costs, per batch, either one load of every row or
# one exact SQL search per event, each reading every row of the namespace: both grow with
# its size, and a load costs as much as 8-14 searches (bench/gate_switch.py, 20,000 rows:
# 0.58 s vs 0.071 s at a load average of 3, 3.0 s vs 0.22 s at 8). Up to this many events
# a batch searches in SQL; more, it loads the namespace (and does not keep it).
SQL_MAX_EVENTS = 10


def namespace_version(cur: psycopg.Cursor[Any], namespace: str) -> int:
    cur.execute(QUERIES["namespace_version"], (namespace,))
    row = cur.fetchone()
    return int(row[0]) if row else 0


def _outside_targets(
    cur: psycopg.Cursor[Any],
    namespace: str,
    live: vectors.LiveSet,
    todo: Sequence[tuple[Any, Any]],
) -> dict[str, Candidate]:
    """Live rows named by a correction that lie outside this model's vector space."""
    out: dict[str, Candidate] = {}
    for ev, vec in todo:
        target = ev.target_memory
        if not target or target in live.by_id:
            continue
        cur.execute(QUERIES["outside_target"], (np.asarray(vec, np.float32), target, namespace))
        row = cur.fetchone()
        if row is not None:
            out[ev.event_id] = Candidate(*row)
    return out


def write_batch(
    cur: psycopg.Cursor[Any],
    cache: vectors.NamespaceCache,
    namespace: str,
    items: Sequence[tuple[Any, Any]],
    config: batch.GateConfig,
    search: str = "memory",
) -> tuple[list[Any], Callable[[], None]]:
    """Gate and write `items` ((Pending, vector) in order). Returns the outcomes and a
    function that installs the batch into the cache; call it only after commit.

    `search`: where the candidates come from: "memory" (the namespace's live vectors,
    cached between batches; a namespace larger than the cache's budget goes to "sql") or
    "sql" (`memsieve.store.gate_sql`, one exact query per event)."""
    model, dims = config.model, config.dims
    cur.execute(QUERIES["lock_batch_events"], (namespace, [ev.event_id for ev, _ in items]))
    status = {r[0]: (r[1], r[2]) for r in cur.fetchall()}
    version = namespace_version(cur, namespace)
    todo = [(ev, vec) for ev, vec in items if status.get(ev.event_id, ("", None))[0] == "pending"]
    if (
        search == "memory"
        and len(todo) <= SQL_MAX_EVENTS
        and not gate_load.fits(cur, cache, namespace, model, dims)
    ):
        # Larger than MEMSIEVE_GATE_CACHE_MB: it would be loaded whole for this batch and
        # not kept. A few events cost less as exact nearest-neighbour queries in SQL.
        cache.too_large += 1
        search = "sql"
    if search == "sql":
        live = gate_sql.load_nearest(cur, namespace, model, dims, todo, config.k)
        cached = partial = True
    else:
        # Cached, brought up to date with the rows changed since, or loaded whole.
        live, cached = gate_load.live_for(cur, cache, namespace, model, dims, version)
        partial = False
    raw = np.asarray([v for _, v in todo], dtype=np.float32).reshape(len(todo), dims)
    in_conflict: frozenset[str] = frozenset()
    if any(ev.target_memory for ev, _ in todo):
        cur.execute(OPEN_CONFLICT_MEMBERS, (namespace, namespace))
        in_conflict = frozenset(r[0] for r in cur.fetchall())
    result = batch.gate(
        [ev for ev, _ in todo],
        raw,
        live,
        config,
        _outside_targets(cur, namespace, live, todo),
        in_conflict,
    )
    by_event = {ev.event_id: ev for ev, _ in todo}
    apply(cur, namespace, result.decisions, by_event, model, dims)

    # Our own writes bumped the version once per row (the trigger) and hold its row lock
    # until commit. Any other difference is a writer outside the gate (revert, re-embed,
    # psql) that committed during the batch: then the cached copy is dropped, not moved on.
    after = namespace_version(cur, namespace)
    expected = version + len(result.new_rows) + len(result.killed)

    outcomes = {
        d.event_id: Outcome(d.event_id, d.outcome, d.memory_id, d.supersedes, d.distance, d.reason)
        for d in result.decisions
    }
    out = []
    for ev, _ in items:
        if ev.event_id in outcomes:
            out.append(outcomes[ev.event_id])
        else:
            # Redelivered or already handled by another worker: change nothing.
            row = status.get(ev.event_id)
            out.append(
                Outcome(ev.event_id, "skipped", row[1] if row else None, None, None, "not pending")
            )

    def install() -> None:
        if partial:
            return  # a few rows of the namespace, not a copy of it
        if after != expected:
            cache.drop(namespace, model)
            return
        if result.new_rows or result.killed:
            result.apply_to(live)
        elif cached:
            return
        cache.put(namespace, model, after, live)

    return out, install


def apply(
    cur: psycopg.Cursor[Any],
    namespace: str,
    decisions: Sequence[batch.Decision],
    events: dict[str, Any],
    model: str,
    dims: int,
) -> None:
    """Carry out the gate's decisions, in order, in the caller's transaction."""
    inserts: list[tuple[Any, ...]] = []
    conflicts: list[tuple[Any, ...]] = []
    superseding: list[str] = []
    updating: list[str] = []
    hiding_hashes: set[str] = set()
    finished: list[tuple[Any, ...]] = []

    def flush_segment() -> None:
        if inserts:
            cur.executemany(INSERT_MEMORY, inserts)
            inserts.clear()
        if conflicts:
            # Before this segment's hides: a conflict with a row the segment hides is
            # closed by the hide (migration 100's trigger), as it would be a batch later.
            cur.executemany(OPEN_CONFLICT, conflicts)
            conflicts.clear()
        for ids, how in ((updating, "update"), (superseding, "")):
            if not ids:
                continue
            cur.execute(QUERIES["set_close_how"], (how,))
            cur.execute(HIDE_SUPERSEDED, (ids,))
            hidden = len(cur.fetchall())
            if hidden != len(ids):
                # Invariant 2: each soft delete must touch exactly one row, or a chain forks.
                raise errors.TransientError(
                    f"supersede hid {hidden} rows for {len(ids)} new versions; retrying"
                )
            ids.clear()
        hiding_hashes.clear()

    for d in decisions:
        ev = events[d.event_id]
        record = json.dumps(d.record)
        if d.action == "merge":
            finished.append(
                ("merged", d.memory_id, None, 0.0, d.reason, record, namespace, d.event_id)
            )
            continue
        if ev.content_hash in hiding_hashes:
            flush_segment()
        inserts.append(
            (
                d.memory_id,
                ev.namespace,
                ev.kind,
                ev.heading,
                ev.content,
                ev.tags,
                ev.content_hash,
                d.vector,
                model,
                dims,
                d.supersedes,
                ev.event_id,
                ev.agent,
                ev.session,
                ev.occurred_at,
                record,
            )
        )
        for c in d.conflicts:
            j = c.judgement
            conflicts.append(
                (
                    namespace,
                    c.older_id,
                    c.newer_id,
                    ev.event_id,
                    j.verdict.value if j else "update",
                    j.judge if j else None,
                    j.score if j else None,
                    j.detail if j else None,
                    c.distance,
                    c.newer_id,
                )
            )
        if d.supersedes is not None:
            if d.hides_hash is not None:
                hiding_hashes.add(d.hides_hash)
            (updating if d.reason == "update" else superseding).append(d.memory_id)
        finished.append(
            (
                d.outcome,
                d.memory_id,
                d.supersedes,
                d.distance,
                d.reason,
                record,
                namespace,
                d.event_id,
            )
        )
    flush_segment()
    if finished:
        cur.executemany(FINISH_EVENT, finished)

"""The gate's write for one namespace batch: one search pass, few round trips.

Runs inside `Store.write_batch`'s transaction, after `pg_advisory_xact_lock(namespace)`.
Per batch, not per event:

1. the batch's events are locked and read in one statement (redeliveries are skipped);
2. the namespace's live vectors come from the process cache when its version matches
   the database's (`memsieve.gate.vectors`), else from one binary query;
3. the whole batch is scored against them in one matrix product; events are then decided
   in order, each seeing the rows that earlier events of the batch inserted or hid;
4. the writes go out in pipelined `executemany` (prepared statements): inserts first, then
   one soft-delete statement whose row count must equal the supersedes (invariant 2),
   then the ledger. An insert whose content hash belongs to a row this segment is about to
   hide waits for that hide (the partial unique index of invariant 1 would refuse it).

The caller installs the batch's changes into the cache only after commit.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import psycopg
from memsieve import errors
from memsieve.gate import vectors
from memsieve.gate.decide import Candidate, Guard, Incoming, decide
from memsieve.store import gate_load
from memsieve.store.rows import Outcome

INSERT_MEMORY = (
    "INSERT INTO memories (id, namespace, kind, heading, content, tags, content_hash,"
    " embedding, embedding_model, embedding_dims, supersedes, event_id, agent, session,"
    " occurred_at, decision)"
    " VALUES (%s,%s,%s,%s,%s,%s,%s,%b,%s,%s,%s,%s,%s,%s,%s,%s)"
)
HIDE_SUPERSEDED = (
    "UPDATE memories m SET deleted_at = n.created_at FROM memories n"
    " WHERE n.id = ANY(%s::uuid[]) AND m.id = n.supersedes AND m.deleted_at IS NULL"
    " RETURNING m.id"
)
FINISH_EVENT = (
    "UPDATE events SET status = 'written', decision = %s, memory_id = %s, supersedes = %s,"
    " distance = %s, reason = %s, decision_record = %s, updated_at = clock_timestamp(),"
    " finished_at = clock_timestamp() WHERE event_id = %s"
)


def load_live(cur: psycopg.Cursor[Any], namespace: str, model: str, dims: int) -> vectors.LiveSet:
    cur.execute(
        "SELECT id::text, kind, heading, content, content_hash, embedding FROM memories"
        " WHERE namespace = %s AND deleted_at IS NULL AND embedding_model = %s",
        (namespace, model),
        binary=True,
    )
    rows, vecs = [], []
    for mid, kind, heading, content, chash, emb in cur.fetchall():
        rows.append(vectors.Row(mid, kind, heading, content, chash))
        vecs.append(emb.to_numpy() if hasattr(emb, "to_numpy") else np.asarray(emb))
    matrix = np.vstack(vecs) if vecs else np.zeros((0, dims), np.float32)
    return vectors.LiveSet.build(dims, rows, matrix)


def namespace_version(cur: psycopg.Cursor[Any], namespace: str) -> int:
    cur.execute("SELECT version FROM namespace_versions WHERE namespace = %s", (namespace,))
    row = cur.fetchone()
    return int(row[0]) if row else 0


class _Batch:
    """The namespace as this batch sees it: the loaded set plus the batch's own changes."""

    def __init__(self, live: vectors.LiveSet) -> None:
        self.live = live
        self.alive = live.alive.copy()
        self.new_rows: list[vectors.Row] = []
        self.new_vecs: list[np.ndarray] = []
        self.new_alive: list[bool] = []
        self.new_by_hash: dict[str, int] = {}
        self.killed: list[str] = []
        # The new vectors again as one growing matrix (and live mask), so each event's
        # search of the batch's own rows is one product, not a re-stack of all of them.
        self._new_mat = np.zeros((0, live.dims), np.float32)
        self._new_mask = np.zeros(0, bool)

    def by_hash(self, h: str) -> vectors.Row | None:
        j = self.new_by_hash.get(h)
        if j is not None and self.new_alive[j]:
            return self.new_rows[j]
        i = self.live.by_hash.get(h)
        if i is not None and self.alive[i]:
            return self.live.rows[i]
        return None

    def find(self, memory_id: str) -> tuple[vectors.Row, np.ndarray] | None:
        """A live row of this namespace and model by id, with its unit vector."""
        i = self.live.by_id.get(memory_id)
        if i is not None:
            return (self.live.rows[i], self.live.matrix[i]) if self.alive[i] else None
        for j, r in enumerate(self.new_rows):
            if r.memory_id == memory_id:
                return (r, self.new_vecs[j]) if self.new_alive[j] else None
        return None

    def knows(self, memory_id: str) -> bool:
        return memory_id in self.live.by_id or any(r.memory_id == memory_id for r in self.new_rows)

    def nearest(self, q: np.ndarray, base_scores: np.ndarray | None, k: int) -> list[Candidate]:
        found: list[tuple[vectors.Row, np.ndarray]] = []
        if base_scores is not None:
            for i in vectors.top_k(base_scores, self.alive, k):
                found.append((self.live.rows[i], self.live.matrix[i]))
        if self.new_vecs:
            n = len(self.new_vecs)
            for j in vectors.top_k(self._new_mat[:n] @ q, self._new_mask[:n], k):
                found.append((self.new_rows[j], self.new_vecs[j]))
        cands = [_candidate(r, v, q) for r, v in found]
        cands.sort(key=lambda c: c.distance)
        return cands[:k]

    def add(self, row: vectors.Row, vec: np.ndarray) -> None:
        j = len(self.new_rows)
        if j == len(self._new_mat):
            grow = max(64, j)
            mat = np.zeros((j + grow, self._new_mat.shape[1]), np.float32)
            mat[:j] = self._new_mat
            mask = np.zeros(j + grow, bool)
            mask[:j] = self._new_mask
            self._new_mat, self._new_mask = mat, mask
        self._new_mat[j] = vec
        self._new_mask[j] = True
        self.new_by_hash[row.content_hash] = j
        self.new_rows.append(row)
        self.new_vecs.append(vec)
        self.new_alive.append(True)

    def kill(self, memory_id: str) -> None:
        self.killed.append(memory_id)
        i = self.live.by_id.get(memory_id)
        if i is not None:
            self.alive[i] = False
            return
        for j, r in enumerate(self.new_rows):
            if r.memory_id == memory_id:
                self.new_alive[j] = False
                self._new_mask[j] = False

    def apply_to(self, live: vectors.LiveSet) -> None:
        """Replay the batch's changes onto the cached set (after commit)."""
        for r, v in zip(self.new_rows, self.new_vecs, strict=True):
            live.append(r, v)
        for mid in self.killed:
            live.kill(mid)


def _candidate(r: vectors.Row, v: np.ndarray, q: np.ndarray) -> Candidate:
    d = vectors.cosine_distance(q, v)
    return Candidate(r.memory_id, r.kind, r.heading, r.content, r.content_hash, d)


def write_batch(
    cur: psycopg.Cursor[Any],
    cache: vectors.NamespaceCache,
    namespace: str,
    items: Sequence[tuple[Any, Any]],
    model: str,
    dims: int,
    threshold_for: Callable[[str], float],
    guards: Sequence[Guard],
    k: int,
    record_for: Callable[..., dict[str, Any]],
) -> tuple[list[Any], Callable[[], None]]:
    """Gate and write `items` ((Pending, vector) in order). Returns the outcomes and a
    function that installs the batch into the cache; call it only after commit."""
    cur.execute(
        "SELECT event_id, status, memory_id::text FROM events WHERE event_id = ANY(%s)"
        " ORDER BY event_id FOR UPDATE",
        ([ev.event_id for ev, _ in items],),
    )
    status = {r[0]: (r[1], r[2]) for r in cur.fetchall()}
    version = namespace_version(cur, namespace)
    live, cached = gate_load.live_for(cur, cache, namespace, model, dims, version)
    batch = _Batch(live)

    todo = [(ev, vec) for ev, vec in items if status.get(ev.event_id, ("", None))[0] == "pending"]
    raw_all = np.asarray([v for _, v in todo], dtype=np.float32).reshape(len(todo), dims)
    q_all = vectors.unit(raw_all)
    scores = q_all @ live.matrix.T if live.n and len(todo) else None

    inserts: list[tuple[Any, ...]] = []
    superseding: list[str] = []
    hiding_hashes: set[str] = set()
    finished: list[tuple[Any, ...]] = []
    outcomes: dict[str, Any] = {}

    def flush_segment() -> None:
        if inserts:
            cur.executemany(INSERT_MEMORY, inserts)
            inserts.clear()
        if superseding:
            cur.execute(HIDE_SUPERSEDED, (superseding,))
            hidden = len(cur.fetchall())
            if hidden != len(superseding):
                # Invariant 2: each soft delete must touch exactly one row, or a chain forks.
                raise errors.TransientError(
                    f"supersede hid {hidden} rows for {len(superseding)} new versions; retrying"
                )
            superseding.clear()
            hiding_hashes.clear()

    for n, (ev, vec) in enumerate(todo):
        q = q_all[n]
        same = batch.by_hash(ev.content_hash)
        if same is not None:
            candidates = [
                Candidate(
                    same.memory_id, same.kind, same.heading, same.content, same.content_hash, 0.0
                )
            ]
        else:
            candidates = batch.nearest(q, scores[n] if scores is not None else None, k)
            target = ev.target_memory
            if target and target not in {c.memory_id for c in candidates}:
                hit = batch.find(target)
                if hit is not None:
                    candidates.append(_candidate(hit[0], hit[1], q))
                elif not batch.knows(target):
                    # A row outside this model's vector space (or not live): ask the database.
                    cur.execute(
                        "SELECT id::text, kind, heading, content, content_hash,"
                        " (embedding <=> %b)::float8 FROM memories"
                        " WHERE id = %s AND namespace = %s AND deleted_at IS NULL",
                        (np.asarray(vec, np.float32), target, namespace),
                    )
                    candidates += [Candidate(*r) for r in cur.fetchall()]
        incoming = Incoming(
            ev.namespace, ev.kind, ev.heading, ev.content, ev.content_hash, ev.target_memory
        )
        d = decide(incoming, candidates, threshold_for(ev.kind), guards)
        record = json.dumps(record_for(d, ev, model, dims, k, guards))
        if d.action == "merge":
            assert d.target is not None
            finished.append(("merged", d.target, None, 0.0, d.reason, record, ev.event_id))
            outcomes[ev.event_id] = Outcome(ev.event_id, "merged", d.target, None, 0.0, d.reason)
            continue
        if ev.content_hash in hiding_hashes:
            flush_segment()
        new_id = str(uuid.uuid4())
        supersedes = d.target if d.action == "supersede" else None
        inserts.append(
            (
                new_id,
                ev.namespace,
                ev.kind,
                ev.heading,
                ev.content,
                ev.tags,
                ev.content_hash,
                raw_all[n],
                model,
                dims,
                supersedes,
                ev.event_id,
                ev.agent,
                ev.session,
                ev.occurred_at,
                record,
            )
        )
        batch.add(vectors.Row(new_id, ev.kind, ev.heading, ev.content, ev.content_hash), q)
        decision = "inserted"
        if supersedes is not None:
            hit = batch.find(supersedes)
            if hit is not None:
                hiding_hashes.add(hit[0].content_hash)
            superseding.append(new_id)
            batch.kill(supersedes)
            decision = "superseded"
        finished.append((decision, new_id, supersedes, d.distance, d.reason, record, ev.event_id))
        outcomes[ev.event_id] = Outcome(
            ev.event_id, decision, new_id, supersedes, d.distance, d.reason
        )
    flush_segment()
    if finished:
        cur.executemany(FINISH_EVENT, finished)
    # Our own writes bumped the version once per row (the trigger) and hold its row lock
    # until commit. Any other difference is a writer outside the gate (revert, re-embed,
    # psql) that committed during the batch: then the cached copy is dropped, not moved on.
    after = namespace_version(cur, namespace)
    expected = version + len(batch.new_rows) + len(batch.killed)

    result = []
    for ev, _ in items:
        if ev.event_id in outcomes:
            result.append(outcomes[ev.event_id])
        else:
            # Redelivered or already handled by another worker: change nothing.
            row = status.get(ev.event_id)
            result.append(
                Outcome(ev.event_id, "skipped", row[1] if row else None, None, None, "not pending")
            )

    def install() -> None:
        if after != expected:
            cache.drop(namespace, model)
            return
        if batch.new_rows or batch.killed:
            batch.apply_to(live)  # type: ignore[arg-type]
        elif cached:
            return
        cache.put(namespace, model, after, live)  # type: ignore[arg-type]

    return result, install

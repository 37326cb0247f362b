"""The batch gate: a namespace's batch of events + its live rows -> ordered decisions, as values.

Pure: no I/O. The store (`memsieve.store.gate_write`) loads the inputs under the namespace's
advisory lock, calls `gate`, and applies the decisions in the same transaction.

- every event is scored against the namespace's live vectors in one matrix product;
- the close pairs of the whole batch (against live rows and against earlier events of the
  batch) go to the judge in one call;
- events are then decided in order by `memsieve.gate.decide.decide`, each seeing the rows
  that earlier events inserted or hid.

The search itself is pluggable only in where the candidates come from: this module searches
the in-memory `LiveSet`; `bench/gate_search.py` keeps the per-event SQL search as the
benchmarks' baseline.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from memsieve.gate import vectors
from memsieve.gate.decide import (
    Candidate,
    GateDecision,
    Guard,
    Incoming,
    ask_judge,
    band_candidate,
    decide,
    decision_record,
)
from memsieve.gate.judge import Judge, Judgement, Verdict, guard_judge

ON_CONFLICT = ("keep", "newest")
# The batch's judge call also covers this many candidates past each event's k nearest: the
# rows an earlier decision of the batch hides let farther ones in, and a pair missed here
# costs a judge call of its own (one request each, for a remote judge). A judge whose calls
# cost nothing of their own sets `prejudge_extra` (the classifier: 0, as most of those
# pairs are never needed and each costs it the same in the batch or on the spot).
PREJUDGE_EXTRA = 2


@dataclass(frozen=True)
class GateConfig:
    threshold_for: Callable[[str], float]  # kind -> cosine-distance threshold
    k: int = 3
    guards: tuple[Guard, ...] = ()
    judge: Judge | None = None  # None: the guards as a judge
    on_conflict: str = "keep"  # keep | newest
    model: str = ""
    dims: int = 0

    def the_judge(self) -> Judge:
        return self.judge if self.judge is not None else guard_judge(self.guards)

    @property
    def judge_name(self) -> str:
        j = self.the_judge()
        return str(getattr(j, "name", getattr(j, "__name__", type(j).__name__)))


@dataclass(frozen=True)
class Conflict:
    """A live memory the new one updates; both stay live, linked."""

    older_id: str
    newer_id: str
    judgement: Judgement | None
    distance: float


@dataclass(frozen=True)
class Decision:
    """What to do with one event. `memory_id`: the new row, or the row merged into."""

    event_id: str
    action: str  # insert | supersede | merge
    memory_id: str
    supersedes: str | None
    distance: float | None
    reason: str
    record: dict[str, Any]
    vector: np.ndarray | None = None  # the raw vector of a new row
    hides_hash: str | None = None  # content hash of the row a supersede hides
    conflicts: list[Conflict] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        return {"insert": "inserted", "supersede": "superseded", "merge": "merged"}[self.action]


@dataclass
class Result:
    decisions: list[Decision]
    new_rows: list[vectors.Row]
    new_vecs: list[np.ndarray]  # unit vectors, for the cache
    killed: list[str]

    def apply_to(self, live: vectors.LiveSet) -> None:
        """Replay the batch's changes onto a cached set (after commit)."""
        for r, v in zip(self.new_rows, self.new_vecs, strict=True):
            live.append(r, v)
        for mid in self.killed:
            live.kill(mid)


class _View:
    """The namespace as this batch sees it: the loaded set plus the batch's own changes."""

    def __init__(self, live: vectors.LiveSet) -> None:
        self.live = live
        self.alive = live.alive.copy()
        self.new_rows: list[vectors.Row] = []
        self.new_vecs: list[np.ndarray] = []
        self.new_alive: list[bool] = []
        self.new_by_hash: dict[str, int] = {}
        self.new_by_id: dict[str, int] = {}
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
        j = self.new_by_id.get(memory_id)
        if j is not None and self.new_alive[j]:
            return self.new_rows[j], self.new_vecs[j]
        return None

    def knows(self, memory_id: str) -> bool:
        return memory_id in self.live.by_id or memory_id in self.new_by_id

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
        self.new_by_id[row.memory_id] = j
        self.new_rows.append(row)
        self.new_vecs.append(vec)
        self.new_alive.append(True)

    def kill(self, memory_id: str) -> None:
        self.killed.append(memory_id)
        i = self.live.by_id.get(memory_id)
        if i is not None:
            self.alive[i] = False
            return
        j = self.new_by_id.get(memory_id)
        if j is not None:
            self.new_alive[j] = False
            self._new_mask[j] = False


def _candidate(r: vectors.Row, v: np.ndarray, q: np.ndarray) -> Candidate:
    d = vectors.cosine_distance(q, v)
    return Candidate(r.memory_id, r.kind, r.heading, r.content, r.content_hash, d)


def _incoming(ev: Any) -> Incoming:
    return Incoming(
        ev.namespace, ev.kind, ev.heading, ev.content, ev.content_hash, ev.target_memory
    )


def _prejudge(
    events: Sequence[Any],
    q_all: np.ndarray,
    scores: np.ndarray | None,
    live: vectors.LiveSet,
    config: GateConfig,
    judge: Judge,
) -> dict[tuple[str, str], Judgement]:
    """Judge in one call the close pairs the batch will most likely meet: each event against
    its k nearest among the live rows and the earlier events of the batch (what the search
    will return unless an earlier decision of the batch changes it; a pair that appears only
    then is judged on the spot)."""
    pairs: list[tuple[Incoming, Candidate]] = []
    seen: set[tuple[str, str]] = set()
    hashes_before: set[str] = set()
    k = config.k + getattr(judge, "prejudge_extra", PREJUDGE_EXTRA)
    for n, ev in enumerate(events):
        if ev.content_hash in live.by_hash or ev.content_hash in hashes_before:
            hashes_before.add(ev.content_hash)
            continue  # byte-identical: a merge, nothing to judge
        hashes_before.add(ev.content_hash)
        q = q_all[n]
        near: list[tuple[vectors.Row, np.ndarray]] = []
        if scores is not None:
            near += [
                (live.rows[i], live.matrix[i]) for i in vectors.top_k(scores[n], live.alive, k)
            ]
        if n:
            earlier = q_all[:n] @ q
            for m in vectors.top_k(earlier, np.ones(n, bool), k):
                prev = events[m]
                # Not written yet: a placeholder id (judges must not rely on memory ids).
                row = vectors.Row(
                    f"batch:{prev.event_id}",
                    prev.kind,
                    prev.heading,
                    prev.content,
                    prev.content_hash,
                )
                near.append((row, q_all[m]))
        cands = sorted((_candidate(r, v, q) for r, v in near), key=lambda c: c.distance)[:k]
        threshold = config.threshold_for(ev.kind)
        # Judged: every pair under the threshold or, when there is none, the nearest one if
        # it lies in the judge's update band (memsieve.gate.decide.band_candidate).
        inc = _incoming(ev)
        far = band_candidate(cands, threshold, judge, inc)
        for c in cands:
            key = (inc.content_hash, c.content_hash)
            close = c.distance < threshold or c is far
            if close and c.content_hash != inc.content_hash and key not in seen:
                seen.add(key)
                pairs.append((inc, c))
    if not pairs:
        return {}
    judgements = ask_judge(judge, pairs)
    return {
        (i.content_hash, c.content_hash): j for (i, c), j in zip(pairs, judgements, strict=True)
    }


def gate(
    events: Sequence[Any],
    raw_vectors: np.ndarray,
    live: vectors.LiveSet,
    config: GateConfig,
    outside: Mapping[str, Candidate] | None = None,
    in_conflict: frozenset[str] = frozenset(),
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
) -> Result:
    """Decide `events` (Pending-like: event_id, namespace, kind, heading, content,
    content_hash, target_memory, ...) in order.

    `raw_vectors`: one row per event, as embedded. `live`: the namespace's live rows in the
    embedder's vector space. `outside`: event id -> the live row its correction names when
    that row is not in `live` (another vector space), with its distance. `in_conflict`:
    ids of live memories in an open conflict (a correction naming one settles it).
    """
    dims = live.dims
    raw_all = np.asarray(raw_vectors, dtype=np.float32).reshape(len(events), dims)
    q_all = vectors.unit(raw_all)
    scores = q_all @ live.matrix.T if live.n and len(events) else None
    view = _View(live)
    judge = config.the_judge()
    # A judge that is cheap per pair (`batched = False`, the guards) is asked as the pairs
    # come up, one event at a time: no pair judged that no decision needs.
    judged = (
        _prejudge(events, q_all, scores, live, config, judge)
        if getattr(judge, "batched", True)
        else {}
    )
    judge_name = config.judge_name
    decisions: list[Decision] = []

    for n, ev in enumerate(events):
        q = q_all[n]
        same = view.by_hash(ev.content_hash)
        if same is not None:
            candidates = [
                Candidate(
                    same.memory_id, same.kind, same.heading, same.content, same.content_hash, 0.0
                )
            ]
        else:
            candidates = view.nearest(q, scores[n] if scores is not None else None, config.k)
            target = ev.target_memory
            if target and target not in {c.memory_id for c in candidates}:
                hit = view.find(target)
                if hit is not None:
                    candidates.append(_candidate(hit[0], hit[1], q))
                elif not view.knows(target) and outside and ev.event_id in outside:
                    candidates.append(outside[ev.event_id])
        d: GateDecision = decide(
            _incoming(ev),
            candidates,
            config.threshold_for(ev.kind),
            config.guards,
            judge=judge,
            judged=judged,
            on_conflict=config.on_conflict,
            in_conflict=in_conflict,
        )
        record = decision_record(
            d, ev, config.model, dims, config.k, config.guards, judge_name, config.on_conflict
        )
        if d.action == "merge":
            assert d.target is not None
            decisions.append(Decision(ev.event_id, "merge", d.target, None, 0.0, d.reason, record))
            continue
        mid = new_id()
        supersedes = d.target if d.action == "supersede" else None
        hides_hash = None
        if supersedes is not None:
            hit = view.find(supersedes)
            hides_hash = hit[0].content_hash if hit is not None else None
        by_id = {c.memory_id: c for c in d.considered}
        conflicts = [
            Conflict(other, mid, by_id[other].judgement, by_id[other].distance)
            for other in d.conflicts
        ]
        view.add(vectors.Row(mid, ev.kind, ev.heading, ev.content, ev.content_hash), q)
        if supersedes is not None:
            view.kill(supersedes)
        decisions.append(
            Decision(
                ev.event_id,
                d.action,
                mid,
                supersedes,
                d.distance,
                d.reason,
                record,
                raw_all[n],
                hides_hash,
                conflicts,
            )
        )
    return Result(decisions, view.new_rows, view.new_vecs, view.killed)


__all__ = ["ON_CONFLICT", "Conflict", "Decision", "GateConfig", "Result", "Verdict", "gate"]

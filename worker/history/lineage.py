"""A memory's lineage and as-of recall (the agent-facing API is memsieve.history.api).

How the past is modelled (migration 040_history.sql), and why:

- A memory row is never rewritten into another fact and never hard-deleted. Whether it was
  live at time T is read from `memory_liveness` (one row per live interval), not from
  created_at/deleted_at alone, because a revert can bring a hidden row back: the row was
  live, then hidden, then live again, and an as-of query in the hidden gap must not see it.
  Triggers on `memories` keep the intervals, so every writer (the gate, a backfill, a revert)
  is covered without knowing about them.
- The links between versions are read from `memory_revisions`, the append-only log of every
  supersede, revert and unrevert. `memories.supersedes` holds only links in force (it stays
  UNIQUE, so the live chain can never fork, invariant 2); a reverted link survives in the log,
  so history still shows it, marked reverted.
- Both tables answer reads only; the decision itself (candidates, distances, threshold,
  guards, embedder) stays where the gate wrote it: memories.decision, and for every written
  event, merges included, events.decision_record.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memsieve.history.format import canonical_id, fmt_ts, is_uuid, short
from memsieve.store import queries as q

if TYPE_CHECKING:
    import numpy.typing as npt

    # Reads, not Store: `memsieve history` imports neither the gate nor numpy.
    from memsieve.store.reads import Reads


# -- results --------------------------------------------------------------------------------------
@dataclass
class Link:
    """`newer`'s write superseded `older`; `active` unless its latest step is a revert."""

    newer_id: str
    older_id: str
    active: bool
    steps: list[int]  # revision ids on this link, oldest first


@dataclass
class Version:
    memory_id: str
    namespace: str
    kind: str
    heading: str
    content: str
    created_at: datetime
    deleted_at: datetime | None
    live: bool
    event_id: str
    agent: str | None
    intervals: list[tuple[datetime, datetime | None]]
    supersedes: str | None  # what its write replaced (even if that was reverted since)
    supersede_active: bool | None  # None: its write replaced nothing
    superseded_by: list[str]  # rows whose write replaced this one, oldest first
    decision: dict[str, Any]
    number: int = 0  # v1, v2, ... in creation order


@dataclass
class Step:
    revision: int
    kind: str  # supersede | revert | unrevert
    newer_id: str
    older_id: str
    at: datetime
    actor: str | None
    reason: str | None
    event_id: str | None
    undoes: int | None


@dataclass
class Lineage:
    """Every version connected to a memory by supersede links, ever, in creation order."""

    memory_id: str
    namespace: str
    versions: list[Version]
    steps: list[Step]
    links: list[Link]
    # Conflicts (migration 100) any version is part of: the gate judged one an update of
    # the other and kept both; open until one of them is hidden.
    conflicts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def live(self) -> list[Version]:
        return [v for v in self.versions if v.live]

    def version(self, memory_id: str) -> Version:
        return next(v for v in self.versions if v.memory_id == memory_id)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def text(self) -> str:
        return render_lineage(self)


@dataclass
class Recalled:
    memory_id: str
    kind: str
    heading: str
    content: str
    tags: list[str]
    created_at: datetime
    live_from: datetime
    live_to: datetime | None
    distance: float
    # Conflicts open at the time asked about: {conflict_id, with, this_is, detail}.
    conflicts: list[dict[str, Any]] = field(default_factory=list)


# -- reads ----------------------------------------------------------------------------------------
def lineage(store: Reads, memory_id: str) -> Lineage | None:
    """The whole supersede history around `memory_id`, or None if there is no such memory."""
    if not is_uuid(memory_id):
        return None
    with store.reading() as cur:
        return lineage_in(cur, canonical_id(memory_id))


def lineage_in(cur: Any, memory_id: str) -> Lineage | None:
    """`lineage` on a dict_row cursor the caller holds (one connection per request)."""
    rows = q.all(cur, "lineage_component", {"id": memory_id})
    if not rows:
        return None
    ids = [r["memory_id"] for r in rows]
    steps = [Step(**r) for r in q.all(cur, "lineage_steps", (ids,))]
    intervals: dict[str, list[tuple[datetime, datetime | None]]] = {}
    for r in q.all(cur, "lineage_intervals", (ids,)):
        intervals.setdefault(r["memory_id"], []).append((r["live_from"], r["live_to"]))

    links: dict[str, Link] = {}
    for s in sorted(steps, key=lambda s: s.revision):
        link = links.setdefault(s.newer_id, Link(s.newer_id, s.older_id, True, []))
        link.steps.append(s.revision)
        link.active = s.kind != "revert"
    versions = []
    for n, r in enumerate(rows, 1):
        mid = r["memory_id"]
        own = links.get(mid)
        versions.append(
            Version(
                memory_id=mid,
                namespace=r["namespace"],
                kind=r["kind"],
                heading=r["heading"],
                content=r["content"],
                created_at=r["created_at"],
                deleted_at=r["deleted_at"],
                live=r["deleted_at"] is None,
                event_id=r["event_id"],
                agent=r["agent"],
                intervals=intervals.get(mid, []),
                supersedes=own.older_id if own else None,
                supersede_active=own.active if own else None,
                superseded_by=[lk.newer_id for lk in links.values() if lk.older_id == mid],
                decision=r["decision"] or {},
                number=n,
            )
        )
    conflicts = q.all(cur, "lineage_conflicts", {"ids": ids})
    return Lineage(
        memory_id, rows[0]["namespace"], versions, steps, list(links.values()), conflicts
    )


def recall_as_of(
    store: Reads, namespace: str, vector: npt.ArrayLike, model: str, as_of: datetime, k: int = 5
) -> list[Recalled]:
    """The k memories nearest `vector` among those live in `namespace` at `as_of` (exact scan).

    Live at T means inside a liveness interval: live_from <= T < live_to. At the instant of a
    supersede the newer row is live and the older one is not, so every T has one answer.
    """
    if as_of.tzinfo is None:
        raise ValueError("as_of must be timezone-aware")
    import numpy as np
    from memsieve.store.recall import mark_conflicts

    vec = np.asarray(vector, dtype=np.float32)
    params = {"v": vec, "ns": namespace, "model": model, "t": as_of, "k": k}
    with store.reading() as cur:
        rows = q.all(cur, "recall_as_of", params)
        # The conflicts open at T, marked as plain recall marks those open now: the newer
        # member first, brought in if it was live then but not among the nearest.
        return [Recalled(**r) for r in mark_conflicts(cur, rows, vec, model, as_of)]


def live_as_of(store: Reads, namespace: str, as_of: datetime) -> list[dict[str, Any]]:
    """Every memory live in `namespace` at `as_of`, oldest first: what the agent believed."""
    return store.live_as_of(namespace, as_of)


# -- plain text -------------------------------------------------------------------------------------
def _interval_text(intervals: list[tuple[datetime, datetime | None]]) -> str:
    return ", ".join(f"{fmt_ts(a)} → {fmt_ts(b) if b else 'now'}" for a, b in intervals) or "never"


def render_lineage(lin: Lineage) -> str:
    num = {v.memory_id: f"v{v.number}" for v in lin.versions}
    n_live = len(lin.live)
    out = [
        f"History of memory {lin.memory_id} (namespace {lin.namespace}): "
        f"{len(lin.versions)} version{'s' if len(lin.versions) != 1 else ''}, oldest first; "
        f"{n_live} live now."
    ]
    for v in lin.versions:
        marks = ["LIVE" if v.live else "hidden"]
        if v.memory_id == lin.memory_id:
            marks.append("<- you asked about this one")
        out.append(f"  {num[v.memory_id]}  {v.memory_id}  {'  '.join(marks)}")
        out.append(f"      [{v.kind}] {v.heading}: {' '.join(v.content.split())}")
        how = f"written {fmt_ts(v.created_at)} by event {v.event_id}"
        if v.agent:
            how += f" (agent {v.agent})"
        if v.supersedes:
            target = num.get(v.supersedes, short(v.supersedes))
            how += f"; replaced {target}"
            if v.decision.get("explicit_target") == v.supersedes:
                how += " (the correction named it)"
            elif v.decision.get("distance") is not None and v.decision.get("threshold") is not None:
                how += f" (distance {v.decision['distance']:.3f} < {v.decision['threshold']:.3f})"
            if not v.supersede_active:
                how += ", since reverted"
        out.append(f"      {how}")
        out.append(f"      live: {_interval_text(v.intervals)}")
    if lin.steps:
        out.append("Steps:")
    for s in lin.steps:
        newer, older = (
            num.get(s.newer_id, short(s.newer_id)),
            num.get(s.older_id, short(s.older_id)),
        )
        if s.kind == "supersede":
            what = f"{newer} superseded {older}: {older} hidden from recall"
            what += f" (event {s.event_id})" if s.event_id else ""
        elif s.kind == "revert":
            what = f"{s.actor or 'someone'} reverted rev-{s.undoes}: {older} live again, {newer} stays live"
        else:
            what = f"{s.actor or 'someone'} undid revert rev-{s.undoes}: {older} hidden again behind {newer}"
        why = f" (reason: {s.reason!r})" if s.reason and s.kind != "supersede" else ""
        if s.kind == "supersede" and s.reason == "update":
            why = " as an update" + ("" if s.event_id else f" (resolved by {s.actor or 'someone'})")
        out.append(f"  {fmt_ts(s.at)}  rev-{s.revision}  {what}{why}")
    if lin.conflicts:
        out.append("Conflicts (updates kept beside the memory they update):")
    for c in lin.conflicts:
        newer = num.get(c["newer_id"], short(c["newer_id"]))
        older = num.get(c["older_id"], short(c["older_id"]))
        state = (
            "OPEN: `memsieve resolve " + str(c["id"]) + " --winner newer|older`"
            if c["closed_at"] is None
            else f"closed {fmt_ts(c['closed_at'])} ({c['closed_how']}; "
            f"{num.get(c['loser_id'], short(c['loser_id']))} hidden)"
        )
        out.append(
            f"  conflict {c['id']}: {newer} updates {older} ({c['judge']}: {c['detail']}), "
            f"opened {fmt_ts(c['opened_at'])}; {state}"
        )
    return "\n".join(out)

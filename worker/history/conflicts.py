"""Conflicts: two live memories the gate judged an update of one another, and how one ends.

The gate opens a conflict when it keeps an update beside the memory it updates
(MEMSIEVE_ON_CONFLICT=keep, the default; migration 100). `open_conflicts` lists them;
`resolve` closes one by a supersede: the winner hides the loser with decision reason
`update`, recorded in the revision log like a gate supersede, so `memsieve revert <winner>`
undoes it (and the conflict reopens), and as-of recall sees the loser live until then.
Recall marks them (`memsieve.store.recall`).

Runs under the namespace's pg_advisory_xact_lock, the write path's lock.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from memsieve import errors
from memsieve.history.format import fmt_ts, quote, short
from memsieve.store import queries as q
from memsieve.store.postgres import Store


class ResolveRefused(errors.PermanentError):
    """The conflict cannot be resolved as asked; nothing was changed."""


@dataclass
class Conflict:
    id: int
    namespace: str
    older_id: str
    newer_id: str
    event_id: str | None
    verdict: str
    judge: str | None
    score: float | None
    detail: str | None
    distance: float | None
    opened_at: datetime
    closed_at: datetime | None
    closed_how: str | None
    loser_id: str | None
    closed_by: str | None
    note: str | None
    older_heading: str
    older_content: str
    newer_heading: str
    newer_content: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def open_conflicts(store: Store, namespace: str | None = None) -> list[Conflict]:
    """Open conflicts, oldest first (of one namespace, or all)."""
    return [Conflict(**r) for r in store.open_conflicts(namespace)]


def conflicts_of(store: Store, memory_ids: list[str]) -> list[Conflict]:
    """Every conflict, open or closed, that one of these memories is part of."""
    return [Conflict(**r) for r in store.conflicts_of(memory_ids)]


def get(store: Store, conflict_id: int) -> Conflict | None:
    row = store.conflict(conflict_id)
    return Conflict(**row) if row else None


@dataclass
class Resolution:
    conflict_id: int
    namespace: str
    winner_id: str
    loser_id: str
    revision: int
    at: datetime
    actor: str | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def resolve(
    store: Store,
    conflict_id: int,
    winner: str,
    actor: str | None = None,
    note: str | None = None,
) -> Resolution:
    """Close an open conflict: `winner` ("newer", "older" or a member's id) supersedes the
    other member with reason `update`."""
    rows = store.rows("conflict_namespace", (conflict_id,))
    if not rows:
        raise ResolveRefused(f"no conflict {conflict_id}; `memsieve conflicts` lists them")
    namespace = rows[0]["namespace"]
    with store.locked(namespace) as cur:
        c = q.one(cur, "lock_conflict", (conflict_id,))
        assert c is not None
        if c["closed_at"] is not None:
            raise ResolveRefused(
                f"conflict {conflict_id} is already closed ({c['closed_how']}, "
                f"{fmt_ts(c['closed_at'])})"
            )
        members = {"older": c["older_id"], "newer": c["newer_id"]}
        win = members.get(winner, winner)
        if win not in members.values():
            raise ResolveRefused(
                f"the winner must be 'newer', 'older' or one of the two memory ids "
                f"({c['newer_id']}, {c['older_id']}), got {winner!r}"
            )
        lose = c["older_id"] if win == c["newer_id"] else c["newer_id"]
        mem = {r["id"]: r for r in q.all(cur, "lock_members", ([win, lose],))}
        if mem[win]["supersedes"] is not None or q.one(cur, "superseded_once", (win,)):
            raise ResolveRefused(
                f"memory {win} already replaced another memory, and a memory replaces at most "
                f"one other (a chain never forks). Send a correction naming memory {lose} as "
                f"its target instead, in words of its own (one byte-identical to a live memory "
                f"is merged into it): it supersedes it with reason 'update' and closes the "
                f"conflict"
            )
        at = q.one(cur, "now")["now"]
        q.execute(cur, "set_close_how", ("resolved",))
        if q.execute(cur, "hide", (at, lose)) != 1:  # pragma: no cover - both members are live
            raise errors.TransientError("resolve hid no row; retry")
        q.execute(cur, "link", (lose, win))
        q.execute(cur, "close_conflict", (actor, note, conflict_id))
        revision = q.one(cur, "record_resolution", (namespace, win, lose, at, actor))["id"]
    w, lo = mem[win], mem[lose]
    text = (
        f"Resolved conflict {conflict_id}: memory {short(win)} "
        f"({quote(w['heading'] + ': ' + w['content'])}) wins; memory {short(lose)} "
        f"({quote(lo['heading'] + ': ' + lo['content'])}) is hidden behind it "
        f"(reason 'update', rev-{revision}, {fmt_ts(at)}{', by ' + actor if actor else ''})"
        f"{' - ' + note if note else ''}. To undo: memsieve revert {win}"
    )
    return Resolution(conflict_id, namespace, win, lose, revision, at, actor, text)

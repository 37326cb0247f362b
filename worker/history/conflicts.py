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
from memsieve.store.postgres import Store
from psycopg.rows import dict_row

_COLUMNS = (
    "c.id, c.namespace, c.older_id::text AS older_id, c.newer_id::text AS newer_id,"
    " c.event_id, c.verdict, c.judge, c.score, c.detail, c.distance, c.opened_at,"
    " c.closed_at, c.closed_how, c.loser_id::text AS loser_id, c.closed_by, c.note,"
    " o.heading AS older_heading, o.content AS older_content,"
    " n.heading AS newer_heading, n.content AS newer_content"
)
_FROM = (
    " FROM memory_conflicts c JOIN memories o ON o.id = c.older_id"
    " JOIN memories n ON n.id = c.newer_id"
)


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
    where, params = "c.closed_at IS NULL", []
    if namespace is not None:
        where += " AND c.namespace = %s"
        params.append(namespace)
    rows = store.query(
        f"SELECT {_COLUMNS}{_FROM} WHERE {where} ORDER BY c.opened_at, c.id",  # noqa: S608
        params,
    )
    return [Conflict(**r) for r in rows]


def conflicts_of(store: Store, memory_ids: list[str]) -> list[Conflict]:
    """Every conflict, open or closed, that one of these memories is part of."""
    if not memory_ids:
        return []
    rows = store.query(
        f"SELECT {_COLUMNS}{_FROM}"  # noqa: S608
        " WHERE c.older_id = ANY(%s::uuid[]) OR c.newer_id = ANY(%s::uuid[])"
        " ORDER BY c.opened_at, c.id",
        (memory_ids, memory_ids),
    )
    return [Conflict(**r) for r in rows]


def get(store: Store, conflict_id: int) -> Conflict | None:
    rows = store.query(f"SELECT {_COLUMNS}{_FROM} WHERE c.id = %s", (conflict_id,))  # noqa: S608
    return Conflict(**rows[0]) if rows else None


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
    with (
        store.pool.connection() as conn,
        conn.transaction(),
        conn.cursor(row_factory=dict_row) as cur,
    ):
        cur.execute("SELECT namespace FROM memory_conflicts WHERE id = %s", (conflict_id,))
        row = cur.fetchone()
        if row is None:
            raise ResolveRefused(f"no conflict {conflict_id}; `memsieve conflicts` lists them")
        namespace = row["namespace"]
        cur.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('memsieve:ns:' || %s, 0))",
            (namespace,),
        )
        cur.execute(
            "SELECT id, older_id::text AS older_id, newer_id::text AS newer_id, closed_at,"
            " closed_how FROM memory_conflicts WHERE id = %s FOR UPDATE",
            (conflict_id,),
        )
        c = cur.fetchone()
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
        cur.execute(
            "SELECT id::text AS id, heading, content, supersedes::text AS supersedes,"
            " deleted_at FROM memories WHERE id = ANY(%s::uuid[]) ORDER BY id FOR UPDATE",
            ([win, lose],),
        )
        rows = {r["id"]: r for r in cur.fetchall()}
        cur.execute(
            "SELECT 1 FROM memory_revisions WHERE newer_id = %s AND kind = 'supersede'", (win,)
        )
        if rows[win]["supersedes"] is not None or cur.fetchone() is not None:
            raise ResolveRefused(
                f"memory {win} already replaced another memory, and a memory replaces at most "
                f"one other (a chain never forks). Send a correction naming memory {lose} as "
                f"its target instead: it supersedes it with reason 'update' and closes the "
                f"conflict"
            )
        cur.execute("SELECT memsieve_now() AS now")
        at = cur.fetchone()["now"]  # type: ignore[index]
        cur.execute("SELECT set_config('memsieve.close_how', 'resolved', true)")
        cur.execute(
            "UPDATE memories SET deleted_at = %s WHERE id = %s AND deleted_at IS NULL",
            (at, lose),
        )
        if cur.rowcount != 1:  # pragma: no cover - both members are live while it is open
            raise errors.TransientError("resolve hid no row; retry")
        cur.execute("UPDATE memories SET supersedes = %s WHERE id = %s", (lose, win))
        cur.execute(
            "UPDATE memory_conflicts SET closed_by = %s, note = %s WHERE id = %s",
            (actor, note, conflict_id),
        )
        cur.execute(
            "INSERT INTO memory_revisions (kind, namespace, newer_id, older_id, at, actor,"
            " reason) VALUES ('supersede', %s, %s, %s, %s, %s, 'update') RETURNING id",
            (namespace, win, lose, at, actor),
        )
        revision = cur.fetchone()["id"]  # type: ignore[index]
    w, lo = rows[win], rows[lose]
    text = (
        f"Resolved conflict {conflict_id}: memory {short(win)} "
        f"({quote(w['heading'] + ': ' + w['content'])}) wins; memory {short(lose)} "
        f"({quote(lo['heading'] + ': ' + lo['content'])}) is hidden behind it "
        f"(reason 'update', rev-{revision}, {fmt_ts(at)}{', by ' + actor if actor else ''})"
        f"{' - ' + note if note else ''}. To undo: memsieve revert {win}"
    )
    return Resolution(conflict_id, namespace, win, lose, revision, at, actor, text)

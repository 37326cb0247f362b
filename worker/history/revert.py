"""Undo a supersede (and undo the undo), without rewriting history or breaking an invariant.

`revert(store, "<memory id>")` takes the memory whose write superseded another and brings
the hidden row back: the same row, same id, live again; the newer row stays live.
`revert(store, "rev-7")` undoes revision 7 if it is the latest step on its link: a revert is
undone by hiding the older row behind the newer one again ("unrevert"), which can itself be
reverted, and so on. Each step is one row in `memory_revisions` (kind, who, when, why, the
revision it undoes); nothing before it is edited.

What changes on `memories`, and why it is the smallest change that keeps the invariants:
- the older row's deleted_at is cleared (recall filters on it) and a new liveness interval
  opens (migration 040's trigger), so as-of answers stay exact: the row was *not* live
  between the supersede and the revert;
- the newer row's `supersedes` is cleared. It names the link in force, and stays UNIQUE:
  if a reverted link kept it, the revived row could never be superseded again without two
  rows claiming it (a forked chain, invariant 2). The link itself lives on in the revision
  log, which is what history and explain read, and an unrevert sets it back.

Refused, with a message saying why and what to do instead, when: the memory superseded
nothing; the step was already undone; the revived row's text is byte-identical to a live row
of its namespace (invariant 1); re-hiding a row that a later write has superseded (that would
fork the chain); or `at` lies before the latest step on the link.

Runs in one transaction under the namespace's pg_advisory_xact_lock, the lock the write
path (Store.write_batch) holds, so a revert and a gate decision never interleave.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import psycopg
from memsieve import errors
from memsieve.history.format import canonical_id, fmt_ts, is_uuid, quote, short
from memsieve.store import queries as q
from memsieve.store.postgres import Store

_REVISION = re.compile(r"^(?:rev-)?(\d{1,18})$")


class RevertRefused(errors.PermanentError):
    """The revert would break an invariant or has nothing to undo; nothing was changed."""


@dataclass
class RevertResult:
    revision: int
    kind: str  # revert | unrevert
    undoes: int
    namespace: str
    newer_id: str
    older_id: str
    at: datetime
    actor: str | None
    reason: str | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _resolve(store: Store, target: str) -> tuple[str, str, int | None]:
    """(namespace, newer memory id, revision id asked for or None)."""
    target = target.strip()
    m = _REVISION.match(target)
    if m:
        link = store.revision_link(int(m.group(1)))
        if link is None:
            raise RevertRefused(f"no revision rev-{m.group(1)}")
        return link[0], link[1], int(m.group(1))
    if not is_uuid(target):
        raise RevertRefused(
            f"{target!r} is neither a memory id (a UUID) nor a revision id (like rev-12)"
        )
    namespace = store.memory_namespace(target)
    if namespace is None:
        raise RevertRefused(f"no memory with id {target}")
    return namespace, target, None


def revert(
    store: Store,
    target: str,
    actor: str | None = None,
    reason: str | None = None,
    at: datetime | None = None,
) -> RevertResult:
    """Undo the supersede made by memory `target`'s write, or undo revision `target`."""
    namespace, newer_id, asked = _resolve(store, canonical_id(target))
    # The write path's lock: a revert and a gate decision of a namespace never interleave.
    with store.locked(namespace) as cur:
        steps = q.all(cur, "revert_steps", (newer_id,))
        if not steps:
            raise RevertRefused(
                f"memory {newer_id} did not supersede anything (its write inserted a new row), "
                f"so there is nothing to revert; `memsieve explain {newer_id}` says why"
            )
        latest, older_id = steps[-1], steps[0]["older_id"]
        if asked is None and latest["kind"] == "revert":
            raise RevertRefused(
                f"memory {newer_id}'s supersede of memory {older_id} was already reverted on "
                f"{fmt_ts(latest['at'])} (rev-{latest['id']}); to undo that revert, run "
                f"`memsieve revert rev-{latest['id']}`"
            )
        if asked is not None and asked != latest["id"]:
            raise RevertRefused(
                f"rev-{asked} was already undone; the latest step on this link is "
                f"rev-{latest['id']} ({latest['kind']}), revert that one instead"
            )
        if at is None:
            at = q.one(cur, "now")["now"]
        elif at.tzinfo is None:
            raise ValueError("at must be timezone-aware")
        if at < latest["at"]:
            raise RevertRefused(
                f"cannot record a step at {fmt_ts(at)}, before the latest step on this link "
                f"(rev-{latest['id']} at {fmt_ts(latest['at'])})"
            )
        # The liveness trigger reads the same clock, so the interval and the log agree exactly.
        q.execute(cur, "set_now", (at.isoformat(),))
        rows = {r["memory_id"]: r for r in q.all(cur, "lock_pair", ([newer_id, older_id],))}
        newer, older = rows[newer_id], rows[older_id]
        if latest["kind"] == "revert":
            kind = "unrevert"
            _rehide(cur, namespace, newer, older, at)
        else:
            kind = "revert"
            _revive(cur, namespace, newer, older)
        params = (kind, namespace, newer_id, older_id, at, actor, reason, latest["id"])
        revision = q.one(cur, "record_revision", params)["id"]
    label_old = f"memory {short(older_id)} ({quote(older['heading'] + ': ' + older['content'])})"
    label_new = f"memory {short(newer_id)} ({quote(newer['heading'] + ': ' + newer['content'])})"
    if kind == "revert":
        text = (
            f"Reverted: {label_old} is live again, next to {label_new}, which stays live. "
            f"Recorded as rev-{revision}"
        )
    else:
        text = (
            f"Undid revert rev-{latest['id']}: {label_old} is hidden again behind {label_new}, "
            f"as the original write decided. Recorded as rev-{revision}"
        )
    text += f" ({fmt_ts(at)}{', by ' + actor if actor else ''}). To undo: memsieve revert rev-{revision}"
    return RevertResult(
        revision, kind, latest["id"], namespace, newer_id, older_id, at, actor, reason, text
    )


def _revive(
    cur: psycopg.Cursor[Any], namespace: str, newer: dict[str, Any], older: dict[str, Any]
) -> None:
    if older["deleted_at"] is None or newer["supersedes"] != older["memory_id"]:
        raise RevertRefused(
            f"memory {older['memory_id']} is not hidden behind memory {newer['memory_id']}; "
            f"nothing to revert"
        )
    twin = q.one(cur, "live_twin", (namespace, older["content_hash"]))
    if twin is not None:
        # Invariant 1. The text is not lost: the live twin holds exactly these bytes.
        raise RevertRefused(
            f"cannot revert: memory {older['memory_id']} has exactly the same text as memory "
            f"{twin['id']}, which is live in namespace {namespace}; bringing it back would put "
            f"two live copies of one text in the namespace. Nothing was changed, and the text "
            f"is already recalled through memory {twin['id']}"
        )
    q.execute(cur, "unlink", (newer["memory_id"], older["memory_id"]))
    if q.execute(cur, "revive", (older["memory_id"],)) != 1:  # pragma: no cover - row locked
        raise errors.TransientError("revert touched no row; retry")


def _rehide(
    cur: psycopg.Cursor[Any],
    namespace: str,
    newer: dict[str, Any],
    older: dict[str, Any],
    at: datetime,
) -> None:
    if older["deleted_at"] is not None:
        hider = q.one(cur, "hider_of", (older["memory_id"],))
        by = f" by memory {hider['id']}" if hider else ""
        raise RevertRefused(
            f"cannot undo the revert: memory {older['memory_id']} has since been superseded{by}; "
            f"hiding it behind memory {newer['memory_id']} too would fork its chain. "
            + (f"Revert memory {hider['id']} first if that is what you want" if hider else "")
        )
    if newer["supersedes"] is not None:
        raise RevertRefused(
            f"cannot undo the revert: memory {newer['memory_id']} now supersedes memory "
            f"{newer['supersedes']}, and a memory replaces at most one other"
        )
    if q.execute(cur, "hide", (at, older["memory_id"])) != 1:  # pragma: no cover - row locked
        raise errors.TransientError("unrevert touched no row; retry")
    try:
        q.execute(cur, "relink", (older["memory_id"], newer["memory_id"]))
    except psycopg.errors.UniqueViolation:  # pragma: no cover - the check above comes first
        raise RevertRefused("cannot undo the revert: it would fork the chain") from None

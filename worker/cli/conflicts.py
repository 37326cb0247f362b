"""`memsieve conflicts | resolve`: updates kept beside the memory they update, and settling one.

An update of a live memory (same subject, a new value) is kept as a second live row linked
to the first as a conflict (MEMSIEVE_ON_CONFLICT=keep, the default). `conflicts` lists the
open ones; `resolve ID --winner newer|older|MEMORY_ID` hides the loser behind the winner
(reason `update`, recorded, undone by `memsieve revert WINNER`).
"""

from __future__ import annotations

import argparse

from memsieve.cli.common import actor, add_change_args, emit_json, open_store, refuse, say, show
from memsieve.settings import Settings


def cmd_conflicts(settings: Settings, args: argparse.Namespace) -> int:
    from memsieve.history import conflicts
    from memsieve.history.format import fmt_ts, quote

    found = conflicts.open_conflicts(open_store(settings), args.namespace)
    if args.json:
        emit_json([c.to_dict() for c in found])
        return 0
    if not found:
        where = f" in namespace {args.namespace!r}" if args.namespace else ""
        say(f"no open conflicts{where}")
        return 0
    for c in found:
        say(
            f"conflict {c.id}  [{c.namespace}]  opened {fmt_ts(c.opened_at)}  ({c.judge}: {c.detail})"
        )
        say(f"  newer {c.newer_id}  {quote(_text(c.newer_heading, c.newer_content))}")
        say(f"  older {c.older_id}  {quote(_text(c.older_heading, c.older_content))}")
    say(f"{len(found)} open; settle one with: memsieve resolve ID --winner newer|older")
    return 0


def _text(heading: str, content: str) -> str:
    return f"{heading}: {content}" if heading else content


def cmd_resolve(settings: Settings, args: argparse.Namespace) -> int:
    from memsieve.history import conflicts

    store = open_store(settings)
    try:
        done = conflicts.resolve(store, args.id, args.winner, actor(args), args.reason)
    except conflicts.ResolveRefused as exc:
        return refuse(exc, args.json)
    return show(done, args.json)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("conflicts", help="open conflicts: live memories that update one another")
    p.add_argument("--namespace", help="only this namespace")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_conflicts)
    p = sub.add_parser(
        "resolve", help="settle a conflict: the winner supersedes the other (reason 'update')"
    )
    p.add_argument("id", type=int, help="the conflict id (`memsieve conflicts`)")
    p.add_argument(
        "--winner", required=True, help="newer, older, or the memory id of the one that holds"
    )
    add_change_args(p, reason="why, kept with the conflict")
    p.set_defaults(func=cmd_resolve)

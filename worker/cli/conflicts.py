"""`memsieve conflicts | resolve`: updates kept beside the memory they update, and settling one.

An update of a live memory (same subject, a new value) is kept as a second live row linked
to the first as a conflict (MEMSIEVE_ON_CONFLICT=keep, the default). `conflicts` lists the
open ones; `resolve ID --winner newer|older|MEMORY_ID` hides the loser behind the winner
(reason `update`, recorded, undone by `memsieve revert WINNER`).
"""

from __future__ import annotations

import argparse
import getpass
from typing import Any

from memsieve.cli.common import emit_json, fail, resolve, say
from memsieve.settings import Settings


def _store(settings: Settings) -> Any:
    from memsieve.store.postgres import Store

    settings = resolve(settings, need_redis=False)
    return Store(settings.database_url or "", max_size=1)


def cmd_conflicts(settings: Settings, args: argparse.Namespace) -> int:
    from memsieve.history import conflicts
    from memsieve.history.format import fmt_ts, quote

    found = conflicts.open_conflicts(_store(settings), args.namespace)
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

    actor = args.actor or f"{getpass.getuser()} (cli)"
    try:
        done = conflicts.resolve(_store(settings), args.id, args.winner, actor, args.reason)
    except conflicts.ResolveRefused as exc:
        if args.json:
            emit_json({"refused": str(exc)})
        return fail(str(exc), 1)
    if args.json:
        emit_json(done.to_dict())
    else:
        say(done.text)
    return 0


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
    p.add_argument("--reason", help="why, kept with the conflict")
    p.add_argument("--actor", help="who, kept in the record (default: your user name)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_resolve)

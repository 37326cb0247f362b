"""`memsieve history | explain | revert`: the past of a memory, and undoing a supersede.

`memsieve recall --as-of` lives with recall in worker/cli/read.py; all of them read through
memsieve.history, the same API an agent calls in Python.
"""

from __future__ import annotations

import argparse

from memsieve import errors
from memsieve.cli.common import actor, add_change_args, fail, open_reads, open_store, refuse, show
from memsieve.settings import Settings


def cmd_history(settings: Settings, args: argparse.Namespace) -> int:
    from memsieve.history import lineage

    lin = lineage.lineage(open_reads(settings), args.memory_id)
    if lin is None:
        return fail(f"no memory with id {args.memory_id}", 1)
    return show(lin, args.json)


def cmd_explain(settings: Settings, args: argparse.Namespace) -> int:
    from memsieve.history import explain

    try:
        found = explain.explain(open_reads(settings), args.id, args.namespace)
    except errors.PermanentError as exc:
        return fail(str(exc), 1)
    return show(found, args.json)


def cmd_revert(settings: Settings, args: argparse.Namespace) -> int:
    from memsieve.history import revert

    try:
        done = revert.revert(open_store(settings), args.id, actor=actor(args), reason=args.reason)
    except revert.RevertRefused as exc:
        return refuse(exc, args.json)
    return show(done, args.json)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "history",
        help="every version of a memory: what it replaced, what replaced it, which is live",
    )
    p.add_argument("memory_id")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_history)
    p = sub.add_parser(
        "explain", help="in plain words: why a memory exists / what became of an event"
    )
    p.add_argument("id", help="a memory id or an event id")
    p.add_argument(
        "--namespace",
        help="the namespace of the event id (required when namespaces share the id); "
        "a memory id of another namespace is not found",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_explain)
    p = sub.add_parser(
        "revert",
        help="undo the supersede a memory's write made (the hidden row comes back), "
        "or undo a revert (rev-N)",
    )
    p.add_argument("id", help="the memory whose write superseded another, or a revision like rev-3")
    add_change_args(p)
    p.set_defaults(func=cmd_revert)

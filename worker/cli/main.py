"""The `memsieve` command."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from memsieve import errors
from memsieve.cli import backfill, conflicts, events, history, read, reembed, service
from memsieve.settings import settings_help

# Commands contributed by other modules: (module, function taking argv).
EXTERNAL = {
    "calibrate": (
        "memsieve.cli.calibrate",
        "cli_calibrate",
        "precision/recall of the gate on labelled pairs",
    ),
    "mcp": (
        "memsieve.cli.mcp",
        "cli_mcp",
        "serve agents over MCP: remember, recall, history, explain",
    ),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memsieve",
        description="The write path for AI agent memory: capture policy, batched embedding, "
        "and a dedupe gate into Postgres + pgvector, through Celery.",
        epilog=settings_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    service.register(sub)
    events.register(sub)
    read.register(sub)
    history.register(sub)
    conflicts.register(sub)
    backfill.register(sub)
    reembed.register(sub)
    for name, (_mod, _fn, text) in EXTERNAL.items():
        sub.add_parser(name, help=text, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Whatever a command writes (MEMSIEVE_HOME state, backfill progress, metrics samples)
    # is the owner's alone.
    os.umask(0o077)
    if argv and argv[0] in EXTERNAL:
        mod, fn, _ = EXTERNAL[argv[0]]
        return int(getattr(importlib.import_module(mod), fn)(argv[1:]))
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        settings = service.settings_for(args)
        return int(args.func(settings, args) or 0)
    except errors.ConfigError as exc:
        sys.stderr.write(f"memsieve: {exc}\n")
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""The `memsieve` command."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import TYPE_CHECKING

from memsieve import errors

if TYPE_CHECKING:
    from memsieve.settings import Settings

# Which module registers each command, so a command imports only its own module (and
# what that module needs): `memsieve stats` does not pay for Celery, the backfill reader
# or the embedded-service supervisor. `--help` and unknown commands import them all.
MODULES = ("service", "events", "read", "history", "conflicts", "backfill", "reembed")
COMMANDS = {
    "up": "service",
    "worker": "service",
    "migrate": "service",
    "down": "service",
    "enqueue": "events",
    "write": "events",
    "schema": "events",
    "recall": "read",
    "events": "read",
    "stats": "read",
    "history": "history",
    "explain": "history",
    "revert": "history",
    "conflicts": "conflicts",
    "resolve": "conflicts",
    "backfill": "backfill",
    "reembed": "reembed",
}

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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or with `command` only the sub-parser of that command's module."""
    from memsieve.settings import settings_help

    parser = argparse.ArgumentParser(
        prog="memsieve",
        description="The write path for AI agent memory: capture policy, batched embedding, "
        "and a dedupe gate into Postgres + pgvector, through Celery.",
        epilog=settings_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    own = COMMANDS.get(command or "")
    for module in (own,) if own else MODULES:
        importlib.import_module(f"memsieve.cli.{module}").register(sub)
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
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        settings = settings_for(args)
        return int(args.func(settings, args) or 0)
    except errors.ConfigError as exc:
        sys.stderr.write(f"memsieve: {exc}\n")
        return 2
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        if exc.filename is None:
            raise
        sys.stderr.write(f"memsieve: cannot read {exc.filename}: {exc.strerror}\n")
        return 2
    except BrokenPipeError:
        # The reader went away (`memsieve stats | head`): no traceback, and none again when
        # Python flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # as a process SIGPIPE ended
    except KeyboardInterrupt:
        return 130


# Commands that only read the store: no capture policy to load.
READ_ONLY = {"recall", "events", "stats", "history", "explain", "schema", "down", "migrate"}


def settings_for(args: argparse.Namespace) -> Settings:
    from memsieve import logs
    from memsieve.settings import Settings

    settings = Settings.from_env(with_policy=getattr(args, "command", None) not in READ_ONLY)
    logs.setup(settings.log_format, settings.log_level)
    return settings


if __name__ == "__main__":
    sys.exit(main())

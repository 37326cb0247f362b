"""Shared CLI plumbing: settings resolution, embedded services, output."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from dataclasses import replace
from datetime import datetime
from typing import Any
from uuid import UUID

from memsieve import termsafe
from memsieve.ops.services import EmbeddedServices
from memsieve.settings import Settings


def resolve(settings: Settings, need_db: bool = True, need_redis: bool = True) -> Settings:
    """Settings with every URL filled: configured ones win, else the embedded services
    under MEMSIEVE_HOME, started here if they are not running yet."""
    services = EmbeddedServices(settings.home)
    db, redis_url, broker = settings.database_url, settings.redis_url, settings.broker_url
    want_pg = need_db and not db
    want_redis = (need_redis and not redis_url) or (need_redis and not broker and not redis_url)
    if want_pg or want_redis:
        state = services.start(need_pg=want_pg, need_redis=want_redis)
        db = db or state.get("database_url")
        redis_url = redis_url or state.get("redis_url")
    return replace(settings, database_url=db, redis_url=redis_url, broker_url=broker or redis_url)


def open_store(settings: Settings) -> Any:
    """A one-connection Store on the configured database (or the embedded one)."""
    from memsieve.store.postgres import Store

    settings = resolve(settings, need_redis=False)
    return Store(settings.database_url or "", max_size=1)


def open_reads(settings: Settings) -> Any:
    """The store's reads alone (memsieve.store.reads), for a command that only reads: it
    does not import the gate or numpy (0.1-0.15 s of every such command)."""
    from memsieve.store.reads import Reads

    settings = resolve(settings, need_redis=False)
    return Reads(settings.database_url or "", max_size=1)


MAX_REASON = 2000  # a record's reason is a sentence or a ticket link, not a document


def _bounded_text(text: str) -> str:
    if len(text) > MAX_REASON:
        raise argparse.ArgumentTypeError(f"at most {MAX_REASON} characters, got {len(text)}")
    return text


def add_change_args(p: argparse.ArgumentParser, reason: str = "why, kept in the record") -> None:
    """--reason, --actor, --json: the arguments of a command that changes the history."""
    p.add_argument(
        "--reason", type=_bounded_text, help=reason + f" (at most {MAX_REASON} characters)"
    )
    p.add_argument("--actor", help="who, kept in the record (default: your user name)")
    p.add_argument("--json", action="store_true")


def actor(args: argparse.Namespace) -> str:
    """Who makes a change from the command line: --actor, else the user name."""
    return str(args.actor or f"{getpass.getuser()} (cli)")


def show(result: Any, as_json: bool) -> int:
    """Print a history result (its .to_dict() as JSON, or its .text) and succeed."""
    if as_json:
        emit_json(result.to_dict())
    else:
        say(result.text)
    return 0


def refuse(exc: Exception, as_json: bool) -> int:
    """A change refused with a reason: said on stderr (and as {"refused": ...} in JSON)."""
    if as_json:
        emit_json({"refused": str(exc)})
    return fail(str(exc), 1)


def _default(o: Any) -> Any:
    if isinstance(o, datetime):
        return o.isoformat()
    if isinstance(o, UUID):
        return str(o)
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(type(o).__name__)


def dumps(obj: Any) -> str:
    return json.dumps(obj, default=_default, ensure_ascii=False, sort_keys=True)


def emit_json(obj: Any) -> None:
    sys.stdout.write(termsafe.escape_json(dumps(obj)) + "\n")


def say(text: str = "") -> None:
    """Print text that may hold stored (producer-written) text, control characters escaped."""
    sys.stdout.write(termsafe.escape(text) + "\n")


def fail(message: str, code: int = 2) -> int:
    sys.stderr.write(f"memsieve: {termsafe.escape(message)}\n")
    return code


def short_ts(ts: datetime | None) -> str:
    return ts.strftime("%Y-%m-%d %H:%M:%S%z") if ts else "-"


def at_least_one(text: str) -> int:
    """argparse type: a whole number >= 1 (a count of memories, of ledger rows, of events per message)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r:.40}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    if n > MAX_COUNT:  # a Postgres bigint, and far more than any listing needs
        raise argparse.ArgumentTypeError(f"must be at most {MAX_COUNT}, got {text:.40}")
    return n


MAX_COUNT = 1_000_000_000

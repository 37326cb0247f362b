"""Shared CLI plumbing: settings resolution, embedded services, output."""

from __future__ import annotations

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

"""Numbered plain-SQL migrations from worker/store/sql/migrations, applied once each, in order."""

from __future__ import annotations

import logging
import re
from importlib import resources

import psycopg
from memsieve.constants import ADVISORY_MIGRATIONS

log = logging.getLogger("memsieve.migrations")
_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


def available() -> list[tuple[int, str, str]]:
    """(version, name, sql) for every migration file, in order."""
    folder = resources.files("memsieve.store") / "sql" / "migrations"
    out = []
    for entry in folder.iterdir():
        m = _NAME.match(entry.name)
        if m:
            out.append((int(m.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    out.sort()
    versions = [v for v, _, _ in out]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"duplicate migration numbers: {versions}")
    return out


def migrate(conn: psycopg.Connection) -> list[str]:
    """Apply pending migrations; safe to run from many processes at once."""
    applied_now: list[str] = []
    with conn.transaction():
        # Serialise concurrent migrators (two workers starting together).
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (ADVISORY_MIGRATIONS,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
        for version, name, sql in available():
            if version in done:
                continue
            conn.execute(sql)  # type: ignore[arg-type]  # trusted file from the package
            conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (version, name)
            )
            applied_now.append(name)
            log.info("applied migration %s", name)
    return applied_now

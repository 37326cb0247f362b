"""The embedded stack on a shared machine: what the application's credentials can and
cannot do, and what MEMSIEVE_HOME looks like on disk (issue 14)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import psycopg
import pytest
import redis
from memsieve.errors import ConfigError
from memsieve.ops import home as private
from memsieve.ops.services import EmbeddedPostgres, EmbeddedRedis, EmbeddedServices


def test_the_application_role_is_no_superuser_and_cannot_run_programs(db_url: str) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        assert row == (False, False, False)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("COPY (SELECT 1) TO PROGRAM 'touch /tmp/memsieve-owned'")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT pg_read_file('/etc/passwd')")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("ALTER SYSTEM SET listen_addresses = '*'")
    assert not Path("/tmp/memsieve-owned").exists()


def test_postgres_wants_a_password_for_every_role(pg_server: EmbeddedPostgres) -> None:
    for user in ("postgres", "memsieve"):
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(
                host="127.0.0.1", port=pg_server.port, user=user, dbname="postgres", password=""
            ).close()
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(
            host="127.0.0.1", port=pg_server.port, user="postgres", password="guess"
        ).close()


@pytest.mark.parametrize(
    "command",
    [
        ("CONFIG", "SET", "dir", "/tmp"),
        ("CONFIG", "GET", "*"),
        ("MODULE", "LOAD", "/tmp/x.so"),
        ("DEBUG", "SLEEP", "0"),
        ("SHUTDOWN", "NOSAVE"),
        ("REPLICAOF", "127.0.0.1", "1"),
        ("SLAVEOF", "127.0.0.1", "1"),
        ("ACL", "SETUSER", "x", "on", ">pw", "+@all"),
        ("FLUSHALL",),
        ("SAVE",),
        ("MONITOR",),
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_redis_admin_commands_are_out_of_the_applications_reach(
    redis_url: str, command: tuple[str, ...]
) -> None:
    client = redis.Redis.from_url(redis_url)
    with pytest.raises(redis.exceptions.NoPermissionError):
        client.execute_command(*command)
    client.close()


def test_redis_serves_the_application_and_refuses_strangers(
    redis_server: EmbeddedRedis, redis_url: str
) -> None:
    app = redis.Redis.from_url(redis_url)
    app.lpush("memsieve-test", "x")
    assert app.brpop(["memsieve-test"], timeout=1) == (b"memsieve-test", b"x")
    app.close()
    stranger = redis.Redis(host="127.0.0.1", port=redis_server.port)
    with pytest.raises(redis.exceptions.AuthenticationError):
        stranger.get("x")
    with pytest.raises(redis.exceptions.AuthenticationError):
        stranger.execute_command("AUTH", "default", "")
    stranger.close()


def _modes(root: Path) -> dict[str, int]:
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = stat.S_IMODE(p.lstat().st_mode)
    return out


def test_a_home_is_private_and_redis_fsyncs_every_write(tmp_path: Path) -> None:
    home = tmp_path / "home"
    # A home from an older version: a world-readable append-only file and state file.
    (home / "redis").mkdir(parents=True)
    (home / "redis" / "appendonly.aof").write_bytes(b"")
    os.chmod(home / "redis" / "appendonly.aof", 0o644)
    os.chmod(home, 0o755)
    services = EmbeddedServices(home)
    try:
        state = services.start(need_pg=False, need_redis=True)
        client = redis.Redis.from_url(state["redis_url"])
        client.lpush("q", "body")
        client.close()
        admin = redis.Redis.from_url(services.redis.admin_url())
        assert admin.config_get("appendfsync") == {"appendfsync": "always"}
        admin.close()
        modes = _modes(home)
        assert stat.S_IMODE(home.stat().st_mode) in (0o700, 0o710)
        assert {"redis/appendonly.aof", "redis/redis.log", "redis/redis.conf"} <= set(modes)
        loose = {name: oct(m) for name, m in modes.items() if m & 0o077}
        assert not loose, loose
        # No credential is on the server's command line.
        pid = services.redis.pid()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        for user in ("memsieve", "memsieve-admin"):
            password = (home / "redis" / f"{user}.password").read_text().strip()
            assert password.encode() not in cmdline
    finally:
        services.stop()


def test_a_cluster_from_before_passwords_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    data = tmp_path / "pg"
    data.mkdir()
    (data / "PG_VERSION").write_text("18\n")
    with pytest.raises(ConfigError, match="trusts every local connection"):
        EmbeddedPostgres(data).init()


def test_the_install_key_is_made_once_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "h" / "memsieve.key"
    first = private.read_or_create_secret(path)
    assert private.read_or_create_secret(path) == first and len(first) == 64
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    os.chmod(path, 0o644)  # loosened by hand: tightened again on the next read
    private.read_or_create_secret(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

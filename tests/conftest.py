"""Shared fixtures of every tier: real embedded PostgreSQL + pgvector and a real redis-server.

One PostgreSQL cluster and one redis-server per test session (started from the PyPI
packages, not from whatever runs on the machine); each test gets a fresh database and
a flushed Redis. Each tier adds its own in its conftest.py (acceptance: worker processes
and a producer; integration: fakes of outside services); helpers any tier may import
live in tests/support/, never in another tier's modules.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import redis
from memsieve.ops.services import EmbeddedPostgres, EmbeddedRedis
from memsieve.settings import Settings
from memsieve.store.postgres import Store

_counter = itertools.count()


def pytest_configure(config: pytest.Config) -> None:
    """A temporary root of this session's own (unless --basetemp says where).

    pytest's default root (/tmp/pytest-of-USER/pytest-N) keeps the last three sessions and
    deletes older ones: with several test runs at once on one machine (CI beside a developer,
    or two checkouts), one session could delete the data directory of another session's
    embedded PostgreSQL while it runs.
    """
    if not config.option.basetemp:
        config.option.basetemp = tempfile.mkdtemp(prefix="memsieve-tests-")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove the session's root when everything passed (kept for a look otherwise)."""
    root = Path(session.config.option.basetemp)
    if exitstatus == 0 and root.name.startswith("memsieve-tests-"):
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def service_dir(prefix: str) -> Iterator[Path]:
    """A folder for an embedded PostgreSQL, outside pytest's temporary tree.

    As root, PostgreSQL runs as another user who must traverse every folder above its
    data; any pytest session that starts (ours, or another one on this machine) resets
    /tmp/pytest-of-root to 0700, which would pull the ground from under a running server.
    """
    path = Path(tempfile.mkdtemp(prefix=f"memsieve-{prefix}-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def services_home() -> Iterator[Path]:
    """MEMSIEVE_HOME for a test that starts its own embedded services."""
    with service_dir("home") as path:
        yield path / "home"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[EmbeddedPostgres]:
    with service_dir("pg") as path:
        pg = EmbeddedPostgres(path / "data", database="postgres")
        pg.start()
        yield pg
        pg.stop(mode="immediate")


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    r = EmbeddedRedis(tmp_path_factory.mktemp("redis"), appendonly=False)
    r.start()
    yield r
    r.stop()


@pytest.fixture
def db_url(pg_server: EmbeddedPostgres) -> Iterator[str]:
    name = f"t_{os.getpid()}_{next(_counter)}_{uuid.uuid4().hex[:6]}"
    # Owned by the application role, as in production: the tests run as a non-superuser.
    pg_server.ensure_app_database(name)
    yield pg_server.url(name)
    with psycopg.connect(pg_server.admin_url("postgres"), autocommit=True) as conn:
        conn.execute(
            psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                psycopg.sql.Identifier(name)
            )
        )


@pytest.fixture
def redis_url(redis_server: EmbeddedRedis) -> str:
    client = redis.Redis.from_url(redis_server.admin_url())  # FLUSHALL is not the app's
    client.flushall()
    client.close()
    return redis_server.url()


@pytest.fixture
def env(db_url: str, redis_url: str, tmp_path: Path) -> dict[str, str]:
    """Environment for a worker or CLI subprocess against this test's services."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("MEMSIEVE_")}
    e.pop("OPENAI_API_KEY", None)
    e.update(
        MEMSIEVE_HOME=str(tmp_path / "home"),
        MEMSIEVE_DATABASE_URL=db_url,
        MEMSIEVE_REDIS_URL=redis_url,
        MEMSIEVE_BROKER_URL=redis_url,
        MEMSIEVE_EMBEDDER="hashing",
        MEMSIEVE_METRICS_PORT="0",
        MEMSIEVE_SWEEP_INTERVAL="2",
        MEMSIEVE_LOG_LEVEL="INFO",
        PYTHONUNBUFFERED="1",
    )
    return e


@pytest.fixture
def settings(env: dict[str, str]) -> Settings:
    return Settings.from_env(env).resolved()


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    s = Store(settings.database_url or "")
    s.migrate()
    yield s
    s.close()


@pytest.fixture
def pipeline(settings: Settings, store: Store) -> Any:
    from memsieve.flow.pipeline import Pipeline

    pipe = Pipeline(settings, store=store)
    yield pipe
    pipe.redis.close()

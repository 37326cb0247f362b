"""Scenario 4, restarts: Redis (broker and locks) and PostgreSQL restart mid-run. Workers
reconnect and retry with backoff, accepted events are not lost, the logs say what happened.

Each test runs its own embedded Redis / PostgreSQL in tmp_path, so restarting them does not
disturb the session's shared services. The broker Redis runs with the append-only file and
`appendfsync always` (docs/delivery.md): a message is on disk before the producer is told
it was accepted. Without persistence the same restart loses every message not yet
captured; `test_non_persistent_redis_broker_loses_uncaptured_messages` measures it.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kombu
import pytest
import redis
from celery import Celery
from memsieve import constants
from memsieve.ops.services import EmbeddedPostgres, EmbeddedRedis
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from tests.support import db, faultkit
from tests.support.workers import Workers, wait_until

AMQP_URL = "amqp://guest:guest@127.0.0.1:5672//"


def _rabbitmq_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5672), timeout=0.5):
            return True
    except OSError:
        return False


def _purge_amqp_queue() -> None:
    """RabbitMQ outlives the test run: drop messages an earlier (failed) run left behind,
    or this test's workers would capture them into this test's database."""
    with kombu.Connection(AMQP_URL, connect_timeout=2) as conn:
        try:
            conn.default_channel.queue_purge(constants.QUEUE)
        except conn.channel_errors:
            pass  # no such queue yet


def _start_redis(r: EmbeddedRedis) -> None:
    r.start()
    if r.appendonly:
        client = redis.Redis.from_url(r.admin_url())
        assert client.config_get("appendfsync") == {"appendfsync": "always"}
        client.close()


class Stack:
    def __init__(
        self, tmp: Path, env: dict[str, str], broker: str, appendonly: bool = True
    ) -> None:
        # PostgreSQL lives outside pytest's tree (see tests/conftest.py: service_dir).
        self.pg = EmbeddedPostgres(tmp / "own-pg", database="memsieve")
        self.redis = EmbeddedRedis(tmp / "own-redis", appendonly=appendonly)
        self.pg.start()
        _start_redis(self.redis)
        if broker == "amqp":
            _purge_amqp_queue()
        # Mutate the dict the `workers` fixture holds, so its workers use this stack.
        env.update(
            MEMSIEVE_DATABASE_URL=self.pg.url(),
            MEMSIEVE_REDIS_URL=self.redis.url(),
            MEMSIEVE_BROKER_URL=self.redis.url(1) if broker == "redis" else AMQP_URL,
            MEMSIEVE_VISIBILITY_TIMEOUT="10",
            MEMSIEVE_LOCK_TTL="3",
        )
        self.settings = Settings.from_env(env).resolved()
        self.store = Store(self.pg.url())
        self.store.migrate()
        # A producer app of its own: the module-level Celery app caches its broker
        # connections, and another test may have pointed it elsewhere.
        self.app = Celery(
            "memsieve-producer", broker=self.settings.broker_url, set_as_current=False
        )
        self.app.conf.broker_connection_timeout = 2

    def close(self) -> None:
        self.app.close()
        self.store.close()
        self.redis.stop()
        self.pg.stop(mode="immediate")


@pytest.fixture
def stack_factory(services_home: Path, env: dict[str, str]) -> Iterator[Any]:
    stacks: list[Stack] = []

    def make(broker: str = "redis", appendonly: bool = True) -> Stack:
        if broker == "amqp" and not _rabbitmq_up():
            pytest.skip(f"RabbitMQ not reachable at {AMQP_URL}")
        s = Stack(services_home.parent / f"stack{len(stacks)}", env, broker, appendonly)
        stacks.append(s)
        return s

    yield make
    for s in stacks:
        s.close()


def _run_with_restart(
    stack: Stack, workers: Workers, restart: Any, label: str, n_ns: int = 10
) -> dict[str, Any]:
    events, expected = faultkit.make_events([f"{label}-{i}" for i in range(n_ns)], 10, sends=10)
    workers.start(concurrency=2)
    workers.start(concurrency=2)
    # The outage must hit a running system, not a worker still starting up.
    assert wait_until(lambda: workers.logs().count(" ready.") >= 2, timeout=60), workers.logs()
    started = time.monotonic()
    accepted: list[str] = []
    producer = threading.Thread(
        target=lambda: accepted.extend(faultkit.send(stack.app, events, producers=4))
    )
    producer.start()
    time.sleep(1.5)  # mid-run: messages queued, events in the inbox, flushes running
    outage = restart()
    producer.join()
    assert len(accepted) == len(events)
    ok = wait_until(lambda: faultkit.terminal_count(stack.store) == len(events), timeout=150)
    assert ok, (faultkit.terminal_count(stack.store), workers.logs()[-4000:])
    figures = faultkit.check_store(stack.store, expected, len(events))
    return {
        "events_lost": 0,
        "outage_s": outage,
        "wall_s": round(time.monotonic() - started, 1),
        **figures,
    }


def _restart_redis(stack: Stack, down: float = 2.0) -> Any:
    def restart() -> float:
        stack.redis.kill()  # SIGKILL: a crash, not a clean shutdown
        time.sleep(down)
        _start_redis(stack.redis)
        return down

    return restart


def _restart_postgres(stack: Stack, down: float = 3.0) -> Any:
    def restart() -> float:
        stack.pg.stop(mode="immediate")  # no checkpoint: crash recovery on start
        time.sleep(down)
        stack.pg.start()
        return down

    return restart


# kombu's Redis transport takes a message with BRPOP and records it as unacked only after
# the reply reaches the client: when the broker is killed between the two, that one
# in-flight message is gone (seen in 2 of 5 runs: 999 of 1,000 captured). RabbitMQ holds
# delivered messages until they are acked, and passes every time. docs/delivery.md.
REDIS_BRPOP_WINDOW = pytest.mark.xfail(
    reason="a Redis broker killed mid-BRPOP can lose the one message in flight (kombu)",
    strict=False,
)


@pytest.mark.slow
@pytest.mark.parametrize("broker", [pytest.param("redis", marks=REDIS_BRPOP_WINDOW), "amqp"])
def test_redis_restart_mid_run_loses_nothing(
    stack_factory: Any, workers: Workers, broker: str
) -> None:
    stack = stack_factory(broker)
    figures = _run_with_restart(stack, workers, _restart_redis(stack), f"rr{broker[0]}")
    logs = workers.logs()
    # The logs say what happened: the connection was lost and came back.
    if broker == "redis":
        assert "Connection to broker lost" in logs or "Cannot connect to redis" in logs
    else:  # the Redis of the locks and the sweeper restarted; RabbitMQ stayed up
        assert "sweep failed, will retry" in logs
    faultkit.report(f"4-redis-restart-{broker}", broker=broker, **figures)


@pytest.mark.slow
@pytest.mark.parametrize("broker", ["redis", "amqp"])
def test_postgres_restart_mid_run_loses_nothing(
    stack_factory: Any, workers: Workers, broker: str
) -> None:
    stack = stack_factory(broker)
    figures = _run_with_restart(stack, workers, _restart_postgres(stack), f"pr{broker[0]}")
    logs = workers.logs()
    # The connection pool waits for the server (up to its 30 s timeout) and says so.
    assert "error connecting" in logs and "Connection refused" in logs
    faultkit.report(f"4-postgres-restart-{broker}", broker=broker, **figures)


@pytest.mark.parametrize("appendonly", [False, True])
def test_non_persistent_redis_broker_loses_uncaptured_messages(
    stack_factory: Any, workers: Workers, appendonly: bool
) -> None:
    """Accepted by the broker, not yet captured (no worker running), then Redis restarts."""
    stack = stack_factory("redis", appendonly=appendonly)
    events, _ = faultkit.make_events(["aof-a"], facts_per_ns=10, sends=10)
    accepted = faultkit.send(stack.app, events, producers=2)
    assert len(accepted) == 100
    stack.redis.kill()
    _start_redis(stack.redis)
    # A draining worker takes whatever the restarted broker still holds, then exits.
    workers.start(concurrency=2, drain=60)
    assert workers.wait_drained() == [0], workers.logs()[-3000:]
    n = db.query(stack.store, "SELECT count(*)::int AS n FROM events")[0]["n"]
    assert faultkit.terminal_count(stack.store) == n  # drained: nothing left pending
    lost = len(accepted) - n
    assert lost == (0 if appendonly else 100)
    faultkit.report("4-broker-persistence", appendonly=appendonly, accepted=100, events_lost=lost)

"""Scenario 5, redelivery: a message delivered twice changes nothing — a replayed backfill,
a pool process lost mid-task (reject_on_worker_lost requeues its message), and a
visibility timeout shorter than the work (the Redis broker hands the message to a second
worker while the first still runs it)."""

from __future__ import annotations

import os
import re
import signal
import time
from typing import Any

import pytest
from memsieve.store.postgres import Store

from tests.support import db, faultkit
from tests.support.workers import Workers, wait_until


def _snapshot(store: Store) -> list[dict[str, Any]]:
    return db.query(
        store,
        "SELECT e.event_id, e.status, e.decision, e.memory_id::text, m.deleted_at IS NULL AS live"
        " FROM events e LEFT JOIN memories m ON m.id = e.memory_id ORDER BY e.event_id",
    )


@pytest.mark.slow
def test_replayed_messages_change_nothing(workers: Workers, store: Store, celery_app: Any) -> None:
    events, expected = faultkit.make_events(["replay-a", "replay-b"], facts_per_ns=10, sends=10)
    faultkit.send(celery_app, events, producers=4, per_message=1)
    workers.start(concurrency=2, drain=120)
    workers.start(concurrency=2, drain=120)
    assert workers.wait_drained() == [0, 0], workers.logs()[-3000:]
    assert faultkit.terminal_count(store) == len(events)
    before = _snapshot(store)
    rows_before = db.query(store, "SELECT count(*)::int AS n FROM memories")[0]["n"]
    # Replay everything twice: once message by message, once as a backfill of lists.
    faultkit.send(celery_app, events, producers=4, per_message=1)
    faultkit.send(celery_app, events, producers=2, per_message=50)
    messages = 2 * len(events) + len(events) // 50  # with the first sends
    workers.start(concurrency=2, drain=120)
    workers.start(concurrency=2, drain=120)
    # Drained: every message handled, nothing pending is left for the sweeper.
    assert workers.wait_drained() == [0, 0, 0, 0], workers.logs()[-3000:]
    handled = re.findall(r"memsieve\.capture\[\S+\] succeeded", workers.logs())
    assert len(handled) == messages  # every capture message, first sends and replays
    assert _snapshot(store) == before
    assert db.query(store, "SELECT count(*)::int AS n FROM memories")[0]["n"] == rows_before
    figures = faultkit.check_store(store, expected, len(events))
    faultkit.report("5a-replay", deliveries_per_event=3, changed_rows=0, **figures)


@pytest.mark.slow
def test_pool_process_killed_mid_write_requeues_and_changes_nothing(
    workers: Workers, store: Store, celery_app: Any
) -> None:
    events, expected = faultkit.make_events(["lost-a"], facts_per_ns=5, sends=10)
    workers.start(concurrency=1, extra_env={"MEMSIEVE_FAULT_DELAY_WRITE": "1.0"})
    tail = faultkit.LogTail(workers.logdir / "worker-0.log")
    faultkit.send(celery_app, events, producers=1, per_message=len(events))
    m = tail.wait_for(r"fault injection: pausing .* in write .*pid (\d+)", timeout=60)
    assert m
    os.kill(int(m.group(1)), signal.SIGKILL)  # the pool process only; its parent survives
    assert wait_until(lambda: faultkit.terminal_count(store) == len(events), timeout=60), (
        workers.logs()[-3000:]
    )
    assert re.search(r"WorkerLostError|exited with 'signal 9", workers.logs())
    figures = faultkit.check_store(store, expected, len(events))
    faultkit.report("5b-worker-lost", pool_kills=1, events_lost=0, **figures)


@pytest.mark.slow
def test_visibility_timeout_shorter_than_the_work_runs_it_twice_harmlessly(
    workers: Workers, store: Store, celery_app: Any
) -> None:
    events, expected = faultkit.make_events(["slow-a"], facts_per_ns=5, sends=4)
    env = {
        "MEMSIEVE_VISIBILITY_TIMEOUT": "10",
        "MEMSIEVE_FAULT_DELAY_EMBED": "12",
        "MEMSIEVE_SWEEP_INTERVAL": "60",
    }
    workers.start(concurrency=1, extra_env=env)
    workers.start(concurrency=1, extra_env=env)
    started = time.monotonic()
    faultkit.send(celery_app, events, producers=1, per_message=len(events))

    def flush_ids_seen_twice() -> list[str]:
        ids = re.findall(r"Task memsieve\.flush\[(\S+)\] received", workers.logs())
        return [i for i in set(ids) if ids.count(i) > 1]

    assert wait_until(lambda: faultkit.terminal_count(store) == len(events), timeout=90)
    assert wait_until(lambda: bool(flush_ids_seen_twice()), timeout=30), workers.logs()[-3000:]
    figures = faultkit.check_store(store, expected, len(events))
    faultkit.report(
        "5c-visibility-timeout",
        redelivered=len(flush_ids_seen_twice()),
        wall_s=round(time.monotonic() - started, 1),
        **figures,
    )

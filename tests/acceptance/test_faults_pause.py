"""Scenario 3, the paused lock holder: a worker holding a namespace's Redis lock is SIGSTOPped
past the lock's TTL (its renewal thread stops with it), a second worker takes the lock and
writes, the first is SIGCONTinued and tries to finish. A Redis lock alone cannot protect
this (redis-py lock tokens are not fencing tokens); the database-side guard does: the
`pg_advisory_xact_lock` held for the whole write transaction, and the gate re-run inside
it (an event is written only if still pending; candidates are read under the lock)."""

from __future__ import annotations

import signal
import time
from typing import Any

import pytest
from memsieve.store.postgres import Store

from tests.support import db, faultkit
from tests.support.workers import Workers, wait_until

TTL = "2"


def _phases(
    ns: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[tuple[str, str], int]]:
    events, expected = faultkit.make_events([ns], facts_per_ns=5, sends=10)
    first = [e for e in events if e["event_id"].endswith("-v0")]
    second = [e for e in events if e["event_id"].endswith(("-v4", "-v8"))]
    return first, second, expected


def _decision_lines(log: str) -> int:
    return sum(1 for line in log.splitlines() if " memsieve.decision " in line)


@pytest.mark.slow
def test_holder_stopped_mid_embed_past_ttl_then_resumed_changes_nothing(
    workers: Workers, store: Store, celery_app: Any
) -> None:
    first, second, expected = _phases("pause-embed")
    env = {"MEMSIEVE_LOCK_TTL": TTL, "MEMSIEVE_FAULT_DELAY_EMBED": "5"}
    a = workers.start(concurrency=1, extra_env=env)
    tail_a = faultkit.LogTail(workers.logdir / "worker-0.log")
    started = time.monotonic()
    faultkit.send(celery_app, first, producers=1)
    assert tail_a.wait_for(r"fault injection: pausing .* in embed", timeout=60)
    faultkit.signal_group(a, signal.SIGSTOP)  # holds the lock and the claimed batch
    try:
        time.sleep(float(TTL) + 1)  # the lock expires: nobody renews it
        faultkit.send(celery_app, second, producers=1)
        workers.start(concurrency=1, extra_env={"MEMSIEVE_LOCK_TTL": TTL})
        n = len(first) + len(second)
        # B takes the expired lock and writes everything, A's claimed batch included.
        assert wait_until(lambda: faultkit.terminal_count(store) == n, timeout=60), workers.logs()[
            -3000:
        ]
    finally:
        faultkit.signal_group(a, signal.SIGCONT)
    # A wakes up with a stale batch and a lost lock: its write changes nothing.
    assert tail_a.wait_for(r"lock expired under this worker|was lost", timeout=30), workers.logs()[
        -3000:
    ]
    time.sleep(1.0)
    wall = time.monotonic() - started
    figures = faultkit.check_store(store, expected, n)
    log_a = (workers.logdir / "worker-0.log").read_text()
    log_b = (workers.logdir / "worker-1.log").read_text()
    assert _decision_lines(log_a) == 0 and _decision_lines(log_b) == n
    faultkit.report(
        "3a-sigstop-mid-embed",
        stopped_s=float(TTL) + 1,
        events_lost=0,
        wall_s=round(wall, 1),
        **figures,
    )


@pytest.mark.slow
def test_holder_stopped_mid_transaction_blocks_the_next_writer_on_the_advisory_lock(
    workers: Workers, store: Store, celery_app: Any
) -> None:
    first, second, expected = _phases("pause-write")
    env = {"MEMSIEVE_LOCK_TTL": TTL, "MEMSIEVE_FAULT_DELAY_WRITE": "3"}
    a = workers.start(concurrency=1, extra_env=env)
    tail_a = faultkit.LogTail(workers.logdir / "worker-0.log")
    started = time.monotonic()
    faultkit.send(celery_app, first, producers=1)
    m = tail_a.wait_for(r"fault injection: pausing .* in write .*pid (\d+)", timeout=60)
    assert m
    faultkit.signal_group(a, signal.SIGSTOP)  # inside the transaction, advisory lock held
    waiting = 0
    try:
        assert faultkit.holds_advisory_lock(store, int(m.group(1)))
        faultkit.send(celery_app, second, producers=1)
        workers.start(concurrency=1, extra_env={"MEMSIEVE_LOCK_TTL": TTL})

        # B takes the expired Redis lock, embeds, and blocks on the advisory lock.
        def b_waits() -> bool:
            return (
                db.query(
                    store,
                    "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
                )[0]["n"]
                == 1
            )

        assert wait_until(b_waits, timeout=60), workers.logs()[-3000:]
        waiting = 1
        time.sleep(1.0)
        assert faultkit.terminal_count(store) == 0  # nobody wrote past the paused holder
    finally:
        faultkit.signal_group(a, signal.SIGCONT)
    n = len(first) + len(second)
    assert wait_until(lambda: faultkit.terminal_count(store) == n, timeout=60), workers.logs()[
        -3000:
    ]
    wall = time.monotonic() - started
    figures = faultkit.check_store(store, expected, n)
    assert figures["inserted"] == 5  # A's rows; B superseded or merged into them
    faultkit.report(
        "3b-sigstop-mid-transaction",
        writers_blocked=waiting,
        events_lost=0,
        wall_s=round(wall, 1),
        **figures,
    )

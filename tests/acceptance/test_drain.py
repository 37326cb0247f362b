"""`memsieve worker --drain`: the worker processes what is queued and exits 0; with work
left at its timeout it exits non-zero. Tests wait on the process, not on its logs."""

from __future__ import annotations

import time
from typing import Any

from memsieve.flow.drain import EXIT_TIMEOUT
from memsieve.store.postgres import Store

from tests.support import db, faultkit
from tests.support.workers import Workers


def test_drain_processes_everything_queued_then_exits_0(
    workers: Workers, store: Store, celery_app: Any
) -> None:
    events, expected = faultkit.make_events(["drain-a", "drain-b"], facts_per_ns=4, sends=2)
    faultkit.send(celery_app, events, producers=2, per_message=3)
    workers.start(concurrency=2, drain=120)
    assert workers.wait_drained() == [0], workers.logs()[-3000:]
    # Everything reached its end state before the exit; nothing is pending.
    assert faultkit.terminal_count(store) == len(events)
    assert db.query(store, "SELECT count(*)::int AS n FROM events WHERE status = 'pending'") == [
        {"n": 0}
    ]
    live = db.query(
        store,
        "SELECT namespace, heading, count(*)::int AS n FROM memories"
        " WHERE deleted_at IS NULL GROUP BY 1, 2",
    )
    assert {(r["namespace"], r["heading"]): r["n"] for r in live} == expected


def test_drain_with_work_left_at_its_timeout_exits_non_zero(
    workers: Workers, store: Store, celery_app: Any
) -> None:
    events, _ = faultkit.make_events(["drain-slow"], facts_per_ns=2, sends=1)
    faultkit.send(celery_app, events, producers=1, per_message=len(events))
    started = time.monotonic()
    # Every flush round sleeps 60 s before embedding: nothing can finish in 5 s.
    workers.start(concurrency=1, drain=5, extra_env={"MEMSIEVE_FAULT_DELAY_EMBED": "60"})
    assert workers.wait_drained(timeout=60) == [EXIT_TIMEOUT], workers.logs()[-3000:]
    assert time.monotonic() - started < 45  # it stopped at its timeout, not after the work
    assert "drain: work left after" in workers.logs()
    assert faultkit.terminal_count(store) < len(events)

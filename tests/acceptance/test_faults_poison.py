"""Scenario 6, poison messages: a message that always fails ends dead with its reason after
a bounded number of attempts, and neither loops forever nor blocks its namespace."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
import redis
from memsieve import constants
from memsieve.store.postgres import Store

from tests.support import db, faultkit
from tests.support.workers import Workers

MARKER = "POISONPILL"
MAX_ATTEMPTS = 3


@pytest.mark.slow
def test_an_event_that_always_fails_goes_dead_and_its_namespace_keeps_flowing(
    workers: Workers, store: Store, celery_app: Any
) -> None:
    events, expected = faultkit.make_events(["poison-a"], facts_per_ns=5, sends=10)
    poison = {
        "event_id": "poison-a-pill",
        "namespace": "poison-a",
        "kind": "failure",
        "heading": "the pill",
        "content": f"Never trust {MARKER} because it always breaks",
    }
    env = {"MEMSIEVE_FAULT_POISON": MARKER, "MEMSIEVE_MAX_ATTEMPTS": str(MAX_ATTEMPTS)}
    started = time.monotonic()
    # The poison goes first, in the same messages as healthy events of its namespace.
    faultkit.send(celery_app, [poison, *events[:9]], producers=1, per_message=10)
    faultkit.send(celery_app, events[9:], producers=4, per_message=1)
    # Two draining workers: each exits once the queue and the inbox are empty.
    workers.start(concurrency=2, extra_env=env, drain=90)
    workers.start(concurrency=2, extra_env=env, drain=90)
    assert workers.wait_drained() == [0, 0], workers.logs()[-3000:]
    n = len(events) + 1
    assert faultkit.terminal_count(store) == n
    wall = time.monotonic() - started
    dead = db.query(
        store, "SELECT event_id, reason, detail, attempts FROM events WHERE status = 'dead'"
    )
    assert dead == [
        {
            "event_id": "poison-a-pill",
            "reason": "retries_exhausted",
            "detail": dead[0]["detail"],
            "attempts": MAX_ATTEMPTS,
        }
    ], dead
    assert "embedding" in dead[0]["detail"]
    # The healthy events of the namespace were all written, none used up its attempts.
    written = db.query(
        store,
        "SELECT count(*)::int AS n, max(attempts)::int AS a FROM events WHERE status = 'written'",
    )[0]
    assert written["n"] == len(events) and written["a"] < MAX_ATTEMPTS
    live = db.query(
        store,
        "SELECT heading, count(*)::int AS n FROM memories WHERE deleted_at IS NULL GROUP BY 1",
    )
    assert {(("poison-a", r["heading"])): r["n"] for r in live} == expected
    # Bounded: no more embedding attempts on the pill than MAX_ATTEMPTS batches holding it,
    # plus at most one by a worker embedding ahead of the busy namespace, which never tries
    # a failed text ahead again (the workers have exited: their logs are complete).
    logs = workers.logs()
    pills = len(re.findall(r"fault injection: poison input", logs))
    ahead = len(re.findall(r"embed ahead of poison-a: \d+ events not embedded", logs))
    assert ahead <= 1 and pills == MAX_ATTEMPTS + ahead, (pills, ahead)
    faultkit.report(
        "6a-poison-event",
        events=n,
        dead=1,
        attempts=MAX_ATTEMPTS,
        healthy_written=written["n"],
        events_lost=0,
        wall_s=round(wall, 1),
    )


def test_a_message_the_task_cannot_run_is_recorded_once_and_not_redelivered(
    workers: Workers, store: Store, celery_app: Any, redis_url: str
) -> None:
    bad = celery_app.send_task(constants.TASK_CAPTURE, args=[], queue=constants.QUEUE)  # no payload
    workers.start(concurrency=1, drain=60)
    assert workers.wait_drained() == [0], workers.logs()[-3000:]
    # Drained: the message was taken, recorded and acked; nothing is left to redeliver it.
    assert db.query(store, "SELECT status, reason, detail FROM events") == [
        {
            "status": "rejected",
            "reason": "invalid_task_message",
            "detail": "the capture message carries no event",
        }
    ]
    logs = workers.logs()
    # Screened before Celery unpacks it: never run, never failed, taken in once.
    assert f"memsieve.capture[{bad.id}] received" not in logs
    assert "raised unexpected" not in logs
    assert logs.count("rejected a broker item that is not a message") == 1
    # Acked: not waiting in the Redis transport's unacked set for a later redelivery.
    assert redis.Redis.from_url(redis_url).hlen("unacked") == 0
    faultkit.report("6b-poison-message", deliveries=1, outcome="recorded once, acked")


@pytest.mark.slow
def test_an_event_that_kills_its_worker_every_time_goes_dead_and_the_rest_are_written(
    workers: Workers, store: Store, celery_app: Any
) -> None:
    events, expected = faultkit.make_events(["crash-a"], facts_per_ns=4, sends=3)
    crasher = {
        "event_id": "crash-a-bomb",
        "namespace": "crash-a",
        "kind": "failure",
        "heading": "the bomb",
        "content": "Whatever you do, do not feed KILLSWITCH to the parser",
    }
    env = {"MEMSIEVE_FAULT_CRASH": "KILLSWITCH", "MEMSIEVE_MAX_ATTEMPTS": str(MAX_ATTEMPTS)}
    # One message: the crasher is batched with healthy events of its namespace.
    faultkit.send(celery_app, [crasher, *events], producers=1, per_message=len(events) + 1)
    workers.start(concurrency=2, extra_env=env, drain=120)
    # Exit 0: the pool replaced its killed children and the worker drained everything.
    assert workers.wait_drained() == [0], workers.logs()[-3000:]
    assert faultkit.terminal_count(store) == len(events) + 1
    rows = db.query(
        store, "SELECT status, reason, claims FROM events WHERE event_id = 'crash-a-bomb'"
    )
    assert rows == [{"status": "dead", "reason": "worker_lost", "claims": MAX_ATTEMPTS}]
    written = db.query(store, "SELECT count(*)::int AS n FROM events WHERE status = 'written'")
    assert written[0]["n"] == len(events)
    crashes = workers.logs().count("fault injection: crashing")
    assert crashes == MAX_ATTEMPTS, crashes

"""Live captures never wait behind a backfill (issue 16): the order work is done in.

A backlog is queued on the backfill lane before the worker starts, then one live lesson
on the live queue. One worker process makes the order exact: every assertion is about
which rows the database wrote before which, by its own clock, never about durations.
"""

from __future__ import annotations

import hashlib
from typing import Any

from memsieve import constants
from memsieve.store.postgres import Store

from tests.support import db
from tests.support.workers import Workers, wait_until

NAMESPACES = ("bf-a", "bf-b", "bf-c")
CHUNK = 40
N_BACKFILL = 480  # 12 capture messages of 40, each touching every backfill namespace


def _word(i: int, j: int) -> str:
    return hashlib.sha1(f"{i}-{j}".encode()).hexdigest()[:6]


def backlog() -> list[dict[str, Any]]:
    # Distinct facts (hashing distance > 0.45 between any two): every one is inserted.
    return [
        {
            "event_id": f"bf-{i}",
            "namespace": NAMESPACES[i % len(NAMESPACES)],
            "kind": "retro",
            "heading": f"old retro {i}",
            "content": f"Deploy {_word(i, 1)} broke {_word(i, 2)} {_word(i, 3)} until "
            f"{_word(i, 4)} {_word(i, 5)} {_word(i, 6)} was pinned",
        }
        for i in range(N_BACKFILL)
    ]


LIVE = {
    "event_id": "live-1",
    "namespace": "agent-live",
    "kind": "correction",
    "heading": "use the staging bucket",
    "content": "Uploads in tests must go to the staging bucket, never to production",
}


def _enqueue_backlog_then_live(celery_app: Any) -> None:
    events = backlog()
    for start in range(0, len(events), CHUNK):
        celery_app.send_task(
            constants.TASK_CAPTURE,
            args=[events[start : start + CHUNK]],
            queue=constants.QUEUE_BACKFILL,
        )
    celery_app.send_task(constants.TASK_CAPTURE, args=[LIVE], queue=constants.QUEUE)


def _all_written(store: Store) -> bool:
    rows = db.query(store, "SELECT count(*)::int AS n FROM events WHERE status = 'written'")
    return rows[0]["n"] == N_BACKFILL + 1


def test_a_live_lesson_is_written_before_any_of_a_queued_backfill(
    workers: Workers, store: Store, celery_app: Any
) -> None:
    _enqueue_backlog_then_live(celery_app)
    workers.start(concurrency=1, extra_env={"MEMSIEVE_EMBEDDER": "hashing"})
    assert wait_until(lambda: _all_written(store), timeout=300), workers.logs()[-3000:]
    live = db.query(store, "SELECT received_at, finished_at FROM events WHERE event_id = 'live-1'")[
        0
    ]
    counts = db.query(
        store,
        "SELECT count(*) FILTER (WHERE received_at < %(done)s)::int AS accepted_before,"
        " count(*) FILTER (WHERE finished_at < %(done)s)::int AS written_before,"
        " count(*)::int AS total"
        " FROM events WHERE event_id LIKE 'bf-%%'",
        {"done": live["finished_at"]},
    )[0]
    # Sent last, taken first: the live capture and its flush ran before the worker
    # touched the backlog at all.
    assert counts == {"accepted_before": 0, "written_before": 0, "total": N_BACKFILL}
    memories = db.query(
        store, "SELECT namespace, count(*)::int AS n FROM memories GROUP BY 1 ORDER BY 1"
    )
    assert memories == [
        {"namespace": "agent-live", "n": 1},
        *({"namespace": ns, "n": N_BACKFILL // len(NAMESPACES)} for ns in NAMESPACES),
    ]


def test_a_backfill_shows_its_first_memories_after_its_first_message(
    workers: Workers, store: Store, celery_app: Any
) -> None:
    events = backlog()
    for start in range(0, len(events), CHUNK):
        celery_app.send_task(
            constants.TASK_CAPTURE,
            args=[events[start : start + CHUNK]],
            queue=constants.QUEUE_BACKFILL,
        )
    workers.start(concurrency=1, extra_env={"MEMSIEVE_EMBEDDER": "hashing"})
    assert wait_until(
        lambda: (
            db.query(store, "SELECT count(*)::int AS n FROM events WHERE status = 'written'")[0][
                "n"
            ]
            == N_BACKFILL
        ),
        timeout=300,
    ), workers.logs()[-3000:]
    first = db.query(store, "SELECT min(finished_at) AS t FROM events")[0]["t"]
    before = db.query(
        store, "SELECT count(*)::int AS n FROM events WHERE received_at < %s", (first,)
    )[0]["n"]
    # Flushes outrank backfill captures: the first message's namespaces were written
    # while the other eleven messages still waited in the queue.
    assert before == CHUNK

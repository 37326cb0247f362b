"""Capture wakes a namespace once per queued flush, and never misses a wake-up."""

from __future__ import annotations

import pytest
import redis
from memsieve import constants
from memsieve.tasks import capture

from tests.support import db


def test_one_flush_per_namespace_until_it_starts_draining(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[str] = []
    monkeypatch.setattr(
        capture, "flush_later", lambda ns, countdown=0.0, **_: sent.append(ns) or True
    )
    client = redis.Redis.from_url(redis_url)
    for _ in range(5):
        capture.wake(client, "a")
    capture.wake(client, "b")
    assert sent == ["a", "b"]
    # The flush deletes the marker before it claims: a capture after that schedules again.
    client.delete(constants.flush_scheduled_key("a"))
    capture.wake(client, "a")
    assert sent == ["a", "b", "a"]


def test_a_refused_send_leaves_no_marker_behind(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(capture, "flush_later", lambda ns, countdown=0.0, **_: False)
    client = redis.Redis.from_url(redis_url)
    capture.wake(client, "a")
    assert client.exists(constants.flush_scheduled_key("a")) == 0


def test_the_flush_clears_the_marker_before_claiming(
    pipeline, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """End to end through the task body: the queued flush drains events whose capture
    skipped scheduling because of the marker."""
    from memsieve.tasks import flush as flush_task

    client = redis.Redis.from_url(redis_url)
    pipeline.accept(
        [{"namespace": "m", "kind": "retro", "heading": "h", "content": "Pin base image digests"}]
    )
    client.set(constants.flush_scheduled_key("m"), "1", ex=30)  # a flush is "queued"
    pipeline.accept(
        [
            {
                "namespace": "m",
                "kind": "retro",
                "heading": "h2",
                "content": "Rotate keys every quarter",
            }
        ]
    )
    monkeypatch.setattr(flush_task.runtime, "pipeline", lambda: pipeline)
    flush_task.flush.run("m")
    assert client.exists(constants.flush_scheduled_key("m")) == 0
    rows = db.query(pipeline.store, "SELECT status, count(*)::int AS n FROM events GROUP BY 1")
    assert rows == [{"status": "written", "n": 2}]


def test_backfill_wakes_jump_the_backlog_once_then_queue_behind_it(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[tuple[str, str, str | None]] = []

    def fake_flush_later(
        ns: str, countdown: float = 0.0, queue: str = "", marker_lane: str | None = None
    ) -> bool:
        sent.append((ns, queue, marker_lane))
        return True

    monkeypatch.setattr(capture, "flush_later", fake_flush_later)
    client = redis.Redis.from_url(redis_url)
    bf = constants.QUEUE_BACKFILL
    for _ in range(3):
        capture.wake(client, "a", bf, every=60.0)
    # A live capture in the same namespace: its own flush, on the live queue.
    capture.wake(client, "a", constants.QUEUE, every=60.0)
    assert sent == [("a", constants.QUEUE_FLUSH, bf), ("a", constants.QUEUE, constants.QUEUE)]
    # The first backfill flush started (marker gone): the next one queues behind the
    # backlog, on the backfill lane, until `every` has passed.
    client.delete(constants.flush_scheduled_key("a", bf))
    capture.wake(client, "a", bf, every=60.0)
    capture.wake(client, "a", bf, every=60.0)
    assert sent[2:] == [("a", bf, bf)]
    # Another namespace gets its own first flush ahead of the backlog.
    capture.wake(client, "b", bf, every=60.0)
    assert sent[3:] == [("b", constants.QUEUE_FLUSH, bf)]
    assert client.ttl(constants.flush_scheduled_key("b", bf)) > 60


def test_lane_of_a_capture_message() -> None:
    class Req:
        def __init__(self, info: object) -> None:
            self.delivery_info = info

    assert (
        capture.lane_of(Req({"routing_key": constants.QUEUE_BACKFILL})) == constants.QUEUE_BACKFILL
    )
    assert capture.lane_of(Req({"routing_key": constants.QUEUE})) == constants.QUEUE
    assert capture.lane_of(Req(None)) == constants.QUEUE
    assert capture.lane_of(Req({"routing_key": "elsewhere"})) == constants.QUEUE


def test_a_flush_stops_after_its_slice_and_requeues_the_rest(
    pipeline, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from memsieve.tasks import flush as flush_task

    # No helper woken to embed ahead (tests/integration/test_embed_ahead.py): only the rest.
    pipeline.settings = replace(
        pipeline.settings, batch_size=2, flush_slice_ms=1, embed_ahead=False
    )
    pipeline.accept(
        [
            {
                "namespace": "s",
                "kind": "retro",
                "heading": f"h{i}",
                "content": f"Fact number {i} about deploys",
            }
            for i in range(5)
        ]
    )
    requeued: list[tuple[str, str]] = []
    monkeypatch.setattr(flush_task.runtime, "pipeline", lambda: pipeline)
    monkeypatch.setattr(
        flush_task,
        "flush_later",
        lambda ns, countdown=0.0, queue=constants.QUEUE_FLUSH: requeued.append((ns, queue)) or True,
    )
    flush_task.flush.run("s")
    rows = db.query(
        pipeline.store, "SELECT status, count(*)::int AS n FROM events GROUP BY 1 ORDER BY 1"
    )
    # One batch of 2 fits the 1 ms slice (a slice always takes one batch); the rest waits
    # on the flush lane.
    assert rows == [{"status": "pending", "n": 3}, {"status": "written", "n": 2}]
    assert requeued == [("s", constants.QUEUE_FLUSH)]

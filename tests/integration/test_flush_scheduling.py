"""Capture wakes a namespace once per queued flush, and never misses a wake-up."""

from __future__ import annotations

import pytest
import redis
from memsieve import constants
from memsieve.tasks import capture


def test_one_flush_per_namespace_until_it_starts_draining(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[str] = []
    monkeypatch.setattr(capture, "flush_later", lambda ns, countdown=0.0: sent.append(ns) or True)
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
    monkeypatch.setattr(capture, "flush_later", lambda ns, countdown=0.0: False)
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
    rows = pipeline.store.query("SELECT status, count(*)::int AS n FROM events GROUP BY 1")
    assert rows == [{"status": "written", "n": 2}]

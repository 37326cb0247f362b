"""memsieve.delivery.publish against a real Redis: the message it pushes is the one Celery
pushes for the same send, it lands where the URL says, and a broker that refuses or is
gone gives a clear error that never holds the password."""

from __future__ import annotations

import base64
import json
import os
import socket
import threading
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis
from celery import Celery
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memsieve import constants
from memsieve.delivery import publish
from memsieve.ops.services import free_port

from tests.support.cli import run
from tests.support.strategies import raw_items

CHUNK = [{"namespace": "web", "kind": "retro", "heading": "Naming", "content": "Use kebab-case."}]
HEADERS = {"x-memsieve-scan": ["ab" * 32]}


def _pushed(url: str, queue: str) -> list[dict[str, Any]]:
    r = redis.Redis.from_url(url)
    try:
        return [json.loads(raw) for raw in r.lrange(queue, 0, -1)]
    finally:
        r.close()


def test_the_message_is_the_one_celery_sends(redis_url: str) -> None:
    app = Celery("producer", broker=redis_url, set_as_current=False)
    app.conf.update(task_serializer="json")
    app.send_task(
        constants.TASK_CAPTURE,
        args=[CHUNK],
        queue=constants.QUEUE_BACKFILL,
        argsrepr="[1 event(s)]",
        headers=HEADERS,
    )
    app.close()
    with publish.RedisPublisher(redis_url) as p:
        p.send(constants.TASK_CAPTURE, [CHUNK], constants.QUEUE_BACKFILL, "[1 event(s)]", HEADERS)
    # LPUSH: the newest first.
    ours, celerys = _pushed(redis_url, constants.QUEUE_BACKFILL)
    for m in (ours, celerys):
        m["headers"].pop("id"), m["headers"].pop("root_id")
        for field in ("correlation_id", "reply_to", "delivery_tag"):
            assert m["properties"].pop(field)
    assert ours["headers"] == celerys["headers"]  # the same origin too: one process
    assert ours["properties"] == celerys["properties"]
    assert json.loads(base64.b64decode(ours.pop("body"))) == json.loads(
        base64.b64decode(celerys.pop("body"))
    )
    assert ours == celerys
    assert ours["headers"]["x-memsieve-scan"] == HEADERS["x-memsieve-scan"]


def test_any_payload_reaches_the_worker_as_celery_would_send_it(redis_url: str) -> None:
    """Whatever a producer sends (strings with lone surrogates, NaN, deep nesting, huge
    integers): the body our message carries decodes to what Celery's carries."""
    app = Celery("producer", broker=redis_url, set_as_current=False)
    app.conf.update(task_serializer="json")
    r = redis.Redis.from_url(redis_url)
    p = publish.RedisPublisher(redis_url)

    @settings(
        max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(st.lists(raw_items, min_size=1, max_size=4))
    def same(items: list[Any]) -> None:
        app.send_task(constants.TASK_CAPTURE, args=[items], queue=constants.QUEUE, argsrepr="x")
        p.send(constants.TASK_CAPTURE, [items], constants.QUEUE, "x")
        ours, celerys = (json.loads(raw) for raw in r.lrange(constants.QUEUE, 0, 1))
        r.delete(constants.QUEUE)
        assert base64.b64decode(ours["body"]) == base64.b64decode(celerys["body"])

    try:
        same()
    finally:
        p.close()
        r.close()
        app.close()


def test_each_message_has_its_own_ids(redis_url: str) -> None:
    with publish.RedisPublisher(redis_url) as p:
        for _ in range(3):
            p.send(constants.TASK_CAPTURE, [CHUNK], constants.QUEUE, "[1]")
    got = _pushed(redis_url, constants.QUEUE)
    assert len(got) == 3
    assert len({m["headers"]["id"] for m in got}) == 3
    assert len({m["properties"]["delivery_tag"] for m in got}) == 3
    for m in got:
        assert m["headers"]["root_id"] == m["headers"]["id"] == m["properties"]["correlation_id"]


def test_the_database_of_the_url_is_used(redis_url: str) -> None:
    other = redis_url.rsplit("/", 1)[0] + "/3"
    with publish.RedisPublisher(other) as p:
        p.send(constants.TASK_CAPTURE, [CHUNK], constants.QUEUE, "[1]")
    assert _pushed(redis_url, constants.QUEUE) == []
    assert len(_pushed(other, constants.QUEUE)) == 1
    redis.Redis.from_url(other).delete(constants.QUEUE)


def test_a_wrong_password_is_refused_without_echoing_it(redis_url: str) -> None:
    u = urlsplit(redis_url)
    wrong = "not-the-Password-9x"
    bad = f"redis://{u.username}:{wrong}@{u.hostname}:{u.port}/0"
    with publish.RedisPublisher(bad) as p, pytest.raises(publish.Unavailable) as info:
        p.send(constants.TASK_CAPTURE, [CHUNK], constants.QUEUE, "[1]")
    assert "refused" in str(info.value)
    assert wrong not in str(info.value) and (u.password or "") not in str(info.value)
    assert _pushed(redis_url, constants.QUEUE) == []


def test_a_closed_port_is_unavailable() -> None:
    with publish.RedisPublisher(f"redis://127.0.0.1:{free_port()}/0", timeout=1) as p:
        with pytest.raises(publish.Unavailable, match="unreachable"):
            p.send(constants.TASK_CAPTURE, [CHUNK], constants.QUEUE, "[1]")


def test_a_broker_that_hangs_up_mid_message_is_unavailable() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    p = publish.RedisPublisher(f"redis://127.0.0.1:{port}/0", timeout=2)

    def hang_up() -> None:
        conn, _ = server.accept()
        conn.recv(10)
        conn.close()

    t = threading.Thread(target=hang_up)
    t.start()
    with pytest.raises(publish.Unavailable):
        p.send(constants.TASK_CAPTURE, [CHUNK], constants.QUEUE, "[1]")
    t.join(5)
    server.close()


def test_enqueue_says_what_was_not_sent_when_the_broker_is_gone(tmp_path: Any) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps({**CHUNK[0], "heading": f"L{i}"}) for i in range(5)))
    url = f"redis://127.0.0.1:{free_port()}/0"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSIEVE_")}
    env |= {
        "MEMSIEVE_HOME": str(tmp_path / "home"),
        "MEMSIEVE_BROKER_URL": url,
        "MEMSIEVE_REDIS_URL": url,
        "MEMSIEVE_EMBEDDER": "hashing",
    }
    proc = run(env, "enqueue", "--file", str(path), "--chunk", "2")
    assert proc.returncode == 1
    assert "unreachable" in proc.stderr and "nothing from item 1 on was sent" in proc.stderr
    assert proc.stdout == ""

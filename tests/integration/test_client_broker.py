"""The producer client against a real Redis broker: what it puts there, and how long it
can keep an agent waiting when the broker does not answer."""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
import redis
from memsieve import client, constants
from memsieve.ops.services import free_port

LESSON = {
    "namespace": "web",
    "kind": "retro",
    "heading": "File naming",
    "content": "This project uses kebab-case for filenames.",
}


def test_a_clean_event_is_queued_under_the_id_returned(redis_url: str) -> None:
    with client.CaptureClient(redis_url) as c:
        event_id = c.capture(LESSON)
    r = redis.Redis.from_url(redis_url)
    (raw,) = r.lrange(constants.QUEUE, 0, -1)
    message = json.loads(raw)
    assert message["headers"]["task"] == constants.TASK_CAPTURE
    assert message["headers"]["argsrepr"] == f"[1 event(s) ns=web first={event_id}]"
    body = json.loads(base64.b64decode(message["body"]))
    assert body[0] == [[{**LESSON, "tags": [], "source": {}, "reasoning": False}]]
    r.close()


def test_a_secret_never_reaches_the_broker(redis_url: str) -> None:
    with client.CaptureClient(redis_url) as c, pytest.raises(client.Refused):
        c.capture_many([LESSON, {**LESSON, "content": "token ghp_" + "a1B2c3D4" * 4 + "e5F6"}])
    r = redis.Redis.from_url(redis_url)
    assert r.llen(constants.QUEUE) == 0  # not even the clean one: all or nothing
    r.close()


@pytest.fixture
def silent_broker() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield int(server.getsockname()[1])
    stop.set()
    t.join(2)
    for s in held:
        s.close()
    server.close()


@pytest.mark.parametrize("where", ["closed", "silent"])
def test_an_unreachable_broker_costs_the_agent_at_most_the_timeout(
    where: str, silent_broker: int
) -> None:
    port = silent_broker if where == "silent" else free_port()
    c = client.CaptureClient(f"redis://127.0.0.1:{port}/0", timeout=1.0)
    started = time.monotonic()
    with pytest.raises(client.Unavailable):
        c.capture(LESSON)
    assert time.monotonic() - started < 2.5


@pytest.fixture
def stalls_once(redis_url: str) -> Iterator[str]:
    """A redis:// URL to a proxy in front of the test's Redis: its first connection gets
    an answer that never ends, later ones are forwarded."""
    target = urlsplit(redis_url)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass

    def drip(conn: socket.socket) -> None:
        try:
            conn.sendall(b"+")
            while not stop.wait(0.2):
                conn.sendall(b"O")
        except OSError:
            pass

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn = server.accept()[0]
            except OSError:
                continue
            held.append(conn)
            if len(held) == 1:
                # The stalled one: a reply that never ends, a byte at a time, so the send
                # waiting on it outlives any socket timeout.
                threading.Thread(target=drip, args=(conn,), daemon=True).start()
                continue
            up = socket.create_connection((target.hostname, target.port))
            held.append(up)
            for a, b in ((conn, up), (up, conn)):
                threading.Thread(target=pump, args=(a, b), daemon=True).start()

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    port = server.getsockname()[1]
    yield f"redis://{target.username}:{target.password}@127.0.0.1:{port}/0"
    stop.set()
    t.join(2)
    for s in held:
        s.close()
    server.close()


def test_a_capture_after_a_stalled_one_goes_through(redis_url: str, stalls_once: str) -> None:
    c = client.CaptureClient(stalls_once, timeout=1.0)
    started = time.monotonic()
    with pytest.raises(client.Unavailable):
        c.capture(LESSON)
    assert time.monotonic() - started < 2.5
    # The stalled send still holds its connection; this one opens another, at once.
    started = time.monotonic()
    event_id = c.capture({**LESSON, "heading": "Second"})
    assert time.monotonic() - started < 1.0
    c.close()
    r = redis.Redis.from_url(redis_url)
    (raw,) = r.lrange(constants.QUEUE, 0, -1)
    assert json.loads(raw)["headers"]["argsrepr"].endswith(f"first={event_id}]")
    r.close()

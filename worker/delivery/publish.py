"""Capture messages put straight on a Redis list: the producer side without Celery.

A producer sends one kind of message: a `memsieve.capture` task with its events. Through
Celery that costs the import of Celery, kombu and redis-py (about 0.3 s of the 0.8 s a
`memsieve enqueue` took on stop 34's machine) for what is, on a Redis broker, one
`LPUSH` of a JSON document. `RedisPublisher` writes that document itself, in the form
Celery (task protocol 2) and kombu's Redis transport give it, over a socket that speaks
RESP: AUTH and SELECT once, then one LPUSH per message onto the queue's list. The worker
cannot tell the two apart (tests/integration/test_light_publish.py sends one of each and
compares them field by field).

Only plain URLs take this path (`light(url)`): `redis://[user:password@]host[:port][/db]`
with no query string. TLS (`rediss://`), sockets, options in a query and AMQP keep
Celery (`memsieve.app`), which knows their settings.

Every read and write is bounded by the timeout; a broker that refuses, closes or does not
answer raises `Unavailable`, whose message never holds the password.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import threading
import uuid
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = ["RedisPublisher", "Unavailable", "light", "task_message"]

DEFAULT_PORT = 6379


class Unavailable(ConnectionError):
    """The broker did not take the message (refused, closed, timed out, or said no)."""


def _parts(url: str) -> tuple[str, int, int, str | None, str | None] | None:
    """(host, port, db, username, password) of a plain redis:// URL, else None."""
    try:
        u = urlsplit(url)
        port = u.port or DEFAULT_PORT
    except ValueError:
        return None
    if u.scheme != "redis" or u.query or u.fragment or not u.hostname:
        return None
    path = u.path.strip("/")
    if path and not path.isdigit():
        return None
    # As redis-py and kombu read them: an empty password is none.
    user = unquote(u.username) if u.username else None
    password = unquote(u.password) if u.password else None
    if user and password is None:
        return None  # kombu reads a lone user name as a password: leave it to kombu
    return u.hostname, port, int(path or 0), user, password


def light(url: str | None) -> bool:
    """Whether `url` is one this module publishes to (else use Celery)."""
    return bool(url) and _parts(url or "") is not None


def _origin() -> str:
    # Celery's anon_nodename(): gen<pid>@<host name>.
    return f"gen{os.getpid()}@{socket.gethostname()}"


def task_message(
    task: str,
    args: list[Any],
    queue: str,
    argsrepr: str,
    headers: dict[str, Any] | None = None,
    reply_to: str = "",
) -> str:
    """The JSON document kombu's Redis transport pushes for Celery's `send_task(task,
    args=args, queue=queue, argsrepr=argsrepr, kwargsrepr="{}", headers=headers)`."""
    task_id = str(uuid.uuid4())
    body = json.dumps(
        [args, {}, {"callbacks": None, "errbacks": None, "chain": None, "chord": None}]
    )
    message = {
        "body": base64.b64encode(body.encode("utf-8")).decode("ascii"),
        "content-encoding": "utf-8",
        "content-type": "application/json",
        "headers": {
            "lang": "py",
            "task": task,
            "id": task_id,
            "shadow": None,
            "eta": None,
            "expires": None,
            "group": None,
            "group_index": None,
            "retries": 0,
            "timelimit": [None, None],
            "root_id": task_id,
            "parent_id": None,
            "argsrepr": argsrepr,
            "kwargsrepr": "{}",
            "origin": _origin(),
            "ignore_result": None,
            "replaced_task_nesting": 0,
            "stamped_headers": None,
            "stamps": {},
            **(headers or {}),
        },
        "properties": {
            "correlation_id": task_id,
            "reply_to": reply_to,
            "argsrepr": argsrepr,
            "delivery_mode": 2,
            # The anonymous exchange: the routing key is the list's name.
            "delivery_info": {"exchange": "", "routing_key": queue},
            "priority": 0,
            "body_encoding": "base64",
            "delivery_tag": str(uuid.uuid4()),
        },
    }
    return json.dumps(message)


def _command(*parts: str | bytes) -> bytes:
    out = [b"*%d\r\n" % len(parts)]
    for p in parts:
        b = p.encode("utf-8") if isinstance(p, str) else p
        out += [b"$%d\r\n" % len(b), b, b"\r\n"]
    return b"".join(out)


class RedisPublisher:
    """One connection to a Redis broker, opened at the first send; `send` pushes one
    capture message and returns once Redis has it. Threads may share one: sends take
    turns."""

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        parts = _parts(url)
        if parts is None:
            raise ValueError("not a plain redis:// URL (see memsieve.delivery.publish.light)")
        self._host, self._port, self._db, self._user, self._password = parts
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._reader: Any = None
        self._lock = threading.Lock()
        # Celery's reply_to is the app's id; one per publisher here.
        self._reply_to = str(uuid.uuid4())

    @property
    def where(self) -> str:
        return f"redis://{self._host}:{self._port}/{self._db}"

    def _reply(self) -> bytes:
        line = self._reader.readline()
        if not line.endswith(b"\r\n"):
            raise Unavailable(f"the broker at {self.where} closed the connection")
        if line[:1] == b"-":
            # Redis' own words ("WRONGPASS invalid username-password pair"): no secret.
            said = line[1:].strip().decode("utf-8", "replace")[:200]
            raise Unavailable(f"the broker at {self.where} refused: {said}")
        return line[1:-2]

    def _connect(self) -> None:
        sock = socket.create_connection((self._host, self._port), timeout=self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock, self._reader = sock, sock.makefile("rb")
        hello = []
        if self._password is not None:
            auth = (self._user, self._password) if self._user else (self._password,)
            hello.append(_command("auth", *auth))
        if self._db:
            hello.append(_command("select", str(self._db)))
        if hello:
            sock.sendall(b"".join(hello))
            for _ in hello:
                self._reply()

    def send(
        self,
        task: str,
        args: list[Any],
        queue: str,
        argsrepr: str,
        headers: dict[str, Any] | None = None,
    ) -> None:
        message = task_message(task, args, queue, argsrepr, headers, self._reply_to)
        with self._lock:
            self._send(queue, message)

    def _send(self, queue: str, message: str) -> None:
        try:
            if self._sock is None:
                self._connect()
            assert self._sock is not None
            self._sock.sendall(_command("lpush", queue, message))
            self._reply()
        except Unavailable:
            self.close()
            raise
        except OSError as exc:  # refused, reset, timed out
            self.close()
            what = "did not answer in time" if isinstance(exc, TimeoutError) else "is unreachable"
            raise Unavailable(f"the broker at {self.where} {what}: {type(exc).__name__}") from None

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
        if self._sock is not None:
            self._sock.close()
        self._sock = self._reader = None

    def __enter__(self) -> RedisPublisher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

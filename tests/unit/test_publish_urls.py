"""Which broker URLs memsieve.delivery.publish writes to itself, and what it reads from
them; every other URL is left to Celery, which knows its options."""

from __future__ import annotations

import pytest
from memsieve.delivery import publish


@pytest.mark.parametrize(
    ("url", "parts"),
    [
        ("redis://127.0.0.1:6379/0", ("127.0.0.1", 6379, 0, None, None)),
        ("redis://localhost", ("localhost", 6379, 0, None, None)),
        ("redis://localhost/", ("localhost", 6379, 0, None, None)),
        ("redis://:s3cret@h:7000/5", ("h", 7000, 5, None, "s3cret")),
        ("redis://app:p%40ss%2Fw@h:1/2", ("h", 1, 2, "app", "p@ss/w")),
        ("redis://[::1]:6380/1", ("::1", 6380, 1, None, None)),
        ("redis://:@h/0", ("h", 6379, 0, None, None)),
    ],
)
def test_plain_urls_are_read(url: str, parts: tuple[object, ...]) -> None:
    assert publish.light(url)
    assert publish._parts(url) == parts


@pytest.mark.parametrize(
    "url",
    [
        None,
        "",
        "rediss://h:6379/0",  # TLS
        "redis://h:6379/0?ssl_cert_reqs=none",  # options
        "redis://h/0#x",
        "redis://h/zero",
        "redis://user@h/0",  # kombu reads a lone name as a password
        "redis://h:99999/0",  # no such port
        "unix:///tmp/redis.sock",
        "amqp://guest:guest@127.0.0.1:5672//",
        "redis:///0",  # no host
    ],
)
def test_other_urls_are_left_to_celery(url: str | None) -> None:
    assert not publish.light(url)
    if url:
        with pytest.raises(ValueError):
            publish.RedisPublisher(url)


def test_the_broker_named_in_errors_has_no_password() -> None:
    p = publish.RedisPublisher("redis://app:hunter2@h:1/2")
    assert p.where == "redis://h:1/2"


def test_commands_are_resp_arrays_of_bulk_strings() -> None:
    assert (
        publish._command("lpush", "q", "é") == b"*3\r\n$5\r\nlpush\r\n$1\r\nq\r\n$2\r\n\xc3\xa9\r\n"
    )

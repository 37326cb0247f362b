"""The envelope screen (memsieve.delivery.envelope), without a broker: what a clean
message keeps, and what refuses a message (the acceptance test runs it on real brokers)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from memsieve import constants
from memsieve.delivery import envelope

CAPTURE, FLUSH = constants.TASK_CAPTURE, constants.TASK_FLUSH
E1, E2, E3 = {"n": 1}, {"n": 2}, {"n": 3}


def test_a_capture_keeps_its_events_and_loses_every_option() -> None:
    headers = {
        "task": CAPTURE,
        "id": "t-1",
        "eta": "2000-01-01T00:00:00",  # long past: runs now
        "expires": "2000-01-01T00:00:00",
        "timelimit": [1, 1],
        "retries": 3,
        "stamps": {"x": 1},
    }
    embed = {"callbacks": [{"task": FLUSH}], "chain": [{"task": "x"}], "chord": 1}
    clean = envelope.screen(CAPTURE, 2, headers, [[E1, [E2, E3]], {}, embed], b"raw")
    assert clean.body == [[[E1, E2, E3]], {}, envelope.CLEAN_EMBED]
    h = clean.headers
    assert (h["id"], h["retries"], h["eta"], h["expires"]) == ("t-1", 3, None, None)
    assert h["timelimit"] == [None, None] and "stamps" not in h


@pytest.mark.parametrize(
    ("args", "kwargs", "items"),
    [
        ([E1], {}, [E1]),
        ([[E1, E2]], {}, [E1, E2]),
        ([E1, E2], {}, [E1, E2]),  # two events as two arguments
        ([], {"payload": [E1]}, [E1]),
        ([E1], {"payload": E2}, [E1, E2]),
        (["text", 5, None], {}, ["text", 5, None]),  # recorded one by one as not events
    ],
)
def test_capture_arity(args: list[Any], kwargs: dict[str, Any], items: list[Any]) -> None:
    assert envelope.screen(CAPTURE, 2, {}, [args, kwargs], b"r").body[0] == [items]


@pytest.mark.parametrize(
    "body",
    [{"a": 1}, [E1], [[E1], {}, {}, {}], [], ["x", {}, {}], [[E1], "x", {}], None, 5, "s"],
)
def test_a_body_that_is_no_task_triple_is_refused(body: Any) -> None:
    with pytest.raises(envelope.Refused) as info:
        envelope.screen(CAPTURE, 2, {}, body, b"r")
    assert info.value.reason == "invalid_task_message"


@pytest.mark.parametrize(
    ("args", "kwargs"), [([E1], {"events": [E1]}), ([], {}), ([[]], {}), ([[], []], {})]
)
def test_unknown_keywords_and_empty_messages_are_refused(
    args: list[Any], kwargs: dict[str, Any]
) -> None:
    with pytest.raises(envelope.Refused, match="keyword|no event"):
        envelope.screen(CAPTURE, 2, {}, [args, kwargs, None], b"r")


def test_protocol_1_and_odd_ids() -> None:
    body = {"task": CAPTURE, "id": ["not", "a", "string"], "args": [[E1]], "kwargs": {}}
    clean = envelope.screen(CAPTURE, 1, {}, body, b"raw-bytes")
    assert clean.body[0] == [[E1]]
    again = envelope.screen(CAPTURE, 1, {}, body, b"raw-bytes")
    assert clean.headers["id"] == again.headers["id"]  # derived from the bytes: stable


@pytest.mark.parametrize("task", [CAPTURE, FLUSH])
def test_only_a_near_eta_is_kept(task: str) -> None:
    """A retry's countdown (at most 30 s) is kept; a far, past or broken eta runs now."""
    now = datetime.now(UTC)
    body = [[E1] if task == CAPTURE else ["ns"], {}, None]
    for eta, kept in [
        ((now + timedelta(seconds=20)).isoformat(), True),
        ((now + timedelta(hours=2)).isoformat(), False),
        ((now - timedelta(seconds=5)).isoformat(), False),
        ("9999-12-31T23:59:59+00:00", False),
        ("tomorrow", False),
        (12, False),
    ]:
        clean = envelope.screen(task, 2, {"eta": eta}, body, b"r")
        assert (clean.headers["eta"] is not None) == kept, eta


def test_flush_takes_one_namespace() -> None:
    clean = envelope.screen(FLUSH, 2, {}, [["ns"], {}, None], b"r")
    assert clean.body[0] == ["ns"] and clean.headers["eta"] is None
    for args in ([], [1], ["a", "b"], [None], [["ns"]]):
        with pytest.raises(envelope.Refused):
            envelope.screen(FLUSH, 2, {}, [args, {}, None], b"r")

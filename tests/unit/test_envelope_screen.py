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
    ("args", "kwargs"),
    [([], {"events": [E1]}), ([], {}), ([[]], {}), ([[], []], {}), ([], {"payload": []})],
)
def test_messages_without_events_are_refused(args: list[Any], kwargs: dict[str, Any]) -> None:
    with pytest.raises(envelope.Refused, match="no event") as info:
        envelope.screen(CAPTURE, 2, {}, [args, kwargs, None], b"r")
    assert info.value.reason == "invalid_task_message"
    assert ("keyword" in info.value.detail) == ("events" in kwargs)


@pytest.mark.parametrize(
    ("args", "kwargs", "items", "unread"),
    [
        ([E1], {"events": [E2]}, [E1], 1),
        ([[E1, E2]], {"x-name": 1, "sk-secret-name": "sk-value"}, [E1, E2], 2),
        ([], {"payload": E2, "namespace": "other"}, [E2], 1),
    ],
)
def test_unknown_keywords_are_not_read_and_the_events_run(
    args: list[Any], kwargs: dict[str, Any], items: list[Any], unread: int
) -> None:
    clean = envelope.screen(CAPTURE, 2, {}, [args, kwargs, None], b"r")
    assert clean.body[0] == [items] and clean.body[1] == {}
    assert clean.refusal is not None
    reason, detail = clean.refusal
    assert reason == "unexpected_keyword_argument"
    assert f"{unread} other(s) not read" in detail and f"{len(items)} event(s)" in detail
    assert not any(k in detail for k in kwargs if k != "payload")  # no name repeated
    known = {k: v for k, v in kwargs.items() if k == "payload"}
    assert envelope.screen(CAPTURE, 2, {}, [args, known, None], b"r").refusal is None


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
    # Not a namespace (a probe: "BAD NS" and "" were run and left no ledger row).
    for args in ([], [1], ["a", "b"], [None], [["ns"]], ["BAD NS"], [""], ["x" * 300]):
        with pytest.raises(envelope.Refused):
            envelope.screen(FLUSH, 2, {}, [args, {}, None], b"r")


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def test_an_event_nested_too_deep_is_not_passed_on_and_its_neighbours_are() -> None:
    """Celery would pickle a few hundred levels for its pool and overflow (the message
    stayed unacked and the worker stalled): the deep event is dropped with a reason, its
    stamp with it, and the others run."""
    deep = {**E2, "source": _nested(900)}
    headers = {"task": CAPTURE, "id": "t-deep", envelope.stamp.HEADER: ["a" * 64, None, "c" * 64]}
    clean = envelope.screen(CAPTURE, 2, headers, [[[E1, deep, E3]], {}, {}], b"raw")
    assert clean.body[0] == [[E1, E3]]
    assert clean.headers[envelope.stamp.HEADER] == ["a" * 64, "c" * 64]
    assert clean.refusal is not None and clean.refusal[0] == "invalid_event"
    assert "1 event(s) nest deeper than 32 levels" in clean.refusal[1]
    assert "2 event(s) are recorded" in clean.refusal[1]
    # Nothing of the event is quoted.
    assert "source" not in clean.refusal[1]
    with pytest.raises(envelope.Refused) as refused:
        envelope.screen(CAPTURE, 2, {"task": CAPTURE}, [[deep], {}, {}], b"raw")
    assert refused.value.reason == "invalid_event"
    # The limit counts containers: 32 levels pass, 33 do not; depth costs no recursion.
    assert not envelope.too_deep(_nested(32)) and envelope.too_deep(_nested(33))
    assert envelope.too_deep(_nested(200_000))
    assert not envelope.too_deep([E1, {"tags": ["a"], "source": {"agent": "x"}}])


def test_a_body_too_deep_to_decode_is_read_event_by_event() -> None:
    """Past ~990 levels nothing decodes the body whole: its events are read one by one,
    whatever their depth or the brackets and escapes inside their strings."""
    import json

    tricky = {**E1, "s": 'a "quoted" ] } [ { , \\ \\" end'}
    very = '{"source": ' + "[" * 5000 + "]" * 5000 + "}"
    body = f"[[[{json.dumps(tricky)}, {very}, {json.dumps(E2)}], {json.dumps(E3)}], {{}}, {{}}]"
    with pytest.raises(RecursionError):
        json.loads(body)
    assert envelope.salvage_capture(body.encode()) == ([tricky, E2, E3], 1)
    clean = envelope.screen(CAPTURE, 2, {"task": CAPTURE}, [[[tricky, E2, E3]], {}, {}], b"r", 1)
    assert clean.body[0] == [[tricky, E2, E3]]
    assert clean.refusal is not None and clean.refusal[0] == "invalid_event"
    assert clean.refusal[1].startswith("1 event(s) nest deeper than 32 levels")
    # Not a plain capture body: refused whole (None), never guessed at.
    for bad in (
        "[" * 5000 + "]" * 5000,
        f'[[{very}], {{"payload": [{very}]}}, {{}}]',
        f"[[{very}] {{}}]",
        f"[[{very}], {{}}, {{}}] trailing",
        "not json",
    ):
        assert envelope.salvage_capture(bad.encode()) is None, bad[:40]
    assert envelope.salvage_capture(b"[[], {}, {}]") == ([], 0)
    # As capture_items reads them: an empty list argument adds no event.
    assert envelope.salvage_capture(f"[[[], {very}, {json.dumps(E1)}], {{}}]".encode()) == ([E1], 1)


def test_a_task_id_that_holds_a_secret_is_replaced() -> None:
    """A black-box probe: a token sent as a message's `id` / `parent_id` passed the id's
    shape check and Flower published it as the task's uuid and parent."""
    token = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9"
    headers = {"task": CAPTURE, "id": token, "root_id": token, "parent_id": token}
    h = envelope.screen(CAPTURE, 2, headers, [[E1], {}, {}], b"raw").headers
    assert token not in repr(h)
    assert h["id"] == envelope.screen(CAPTURE, 2, {}, [[E1], {}, {}], b"raw").headers["id"]
    assert h["root_id"] is None and h["parent_id"] is None
    ok = {"task": CAPTURE, "id": "3f2c1e9a-7b4d-4c1e-9f7a-2b6c8d0e1f3a", "parent_id": "p-1"}
    h = envelope.screen(CAPTURE, 2, ok, [[E1], {}, {}], b"raw").headers
    assert (h["id"], h["parent_id"]) == (ok["id"], "p-1")


def test_a_huge_integer_or_invalid_utf8_in_one_event_costs_only_that_event() -> None:
    """A black-box probe: one event with a 5,000-digit integer (valid JSON, past Python's
    int-conversion limit) or invalid UTF-8 inside a string made the whole message
    undecodable; its neighbours were never recorded."""
    import json

    good = [json.dumps(E1), json.dumps(E2)]
    big = '{"tags": [' + "7" * 5000 + "]}"
    body = f"[[[{good[0]}, {big}, {good[1]}]], {{}}, {{}}]".encode()
    with pytest.raises(ValueError):
        json.loads(body)
    assert envelope.salvage_capture(body) == ([E1, E2], 1)
    broken = (
        f'[[[{good[0]}, {{"heading": "a'.encode()
        + b"\xff\xfe"
        + f'"}}, {good[1]}]], {{}}]'.encode()
    )
    with pytest.raises(UnicodeDecodeError):
        broken.decode("utf-8")
    assert envelope.salvage_capture(broken) == ([E1, E2], 1)

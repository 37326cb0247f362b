"""`memsieve enqueue` checks and sends chunk by chunk: an item holding a secret is never
sent, its chunk-mates are, and the exit code says which happened."""

from __future__ import annotations

import json
from typing import Any

import pytest
from memsieve import constants, ids
from memsieve.cli import events, main
from memsieve.settings import Settings

from tests.support.imports import loaded_after

GHP = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9"


def lesson(n: int, **extra: Any) -> dict[str, Any]:
    return {
        "namespace": "web",
        "kind": "retro",
        "heading": f"Lesson {n}",
        "content": f"Run the migrations before deploy number {n}.",
        **extra,
    }


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> list[tuple[str, list[Any]]]:
    """What reached the broker: (queue, chunk) per message."""
    monkeypatch.setenv("MEMSIEVE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMSIEVE_EMBEDDER", "hashing")
    out: list[tuple[str, list[Any]]] = []
    monkeypatch.setattr(
        events._Sender, "send", lambda self, chunk, stamps=None: out.append((self.queue, chunk))
    )
    return out


def test_a_secret_is_skipped_its_chunk_mates_are_sent_and_the_exit_code_says_so(
    sent: list[tuple[str, list[Any]]], tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = lesson(2, content=f"token {GHP} in the CI log")
    path = tmp_path / "events.jsonl"
    path.write_text(
        "\n".join([json.dumps(lesson(1)), json.dumps(secret), json.dumps(lesson(3)), "{oops"])
        + "\n"
    )
    code = main.main(["enqueue", "--file", str(path), "--chunk", "2"])
    out, err = capsys.readouterr()
    assert code == events.PARTIAL == 3
    assert sent == [
        (constants.QUEUE_BACKFILL, [lesson(1)]),
        (constants.QUEUE_BACKFILL, [lesson(3), "{oops"]),
    ]
    assert out.splitlines() == [
        ids.event_id_for(lesson(1)),
        "-",
        ids.event_id_for(lesson(3)),
        ids.event_id_for("{oops"),
    ]
    assert "item 2: github_token in content" in err and "the other 3 were sent" in err
    assert GHP not in err + out


def test_when_every_item_holds_a_secret_nothing_is_sent_and_the_code_is_2(
    sent: list[tuple[str, list[Any]]], tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(lesson(1, heading=f"Leak {GHP}")) + "\n" + f'["{GHP}"]\n')
    code = main.main(["enqueue", "--file", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and sent == [] and json.loads(out) == [None, None]
    assert "refused, nothing was sent" in err and "item 2: a secret in an item" in err
    assert GHP not in err + out


def test_items_are_sent_while_later_ones_are_still_being_read(
    sent: list[tuple[str, list[Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    log: list[str] = []

    def source() -> Any:
        for n in range(5):
            log.append(f"read {n}")
            yield lesson(n)

    real_send = events._Sender.send

    def send(self: events._Sender, chunk: list[Any], stamps: Any = None) -> None:
        log.append(f"send {len(chunk)}")
        real_send(self, chunk, stamps)

    monkeypatch.setattr(events._Sender, "send", send)
    got, problems = events.enqueue(source(), Settings.from_env(), chunk=2)
    assert problems == [] and got == [ids.event_id_for(lesson(n)) for n in range(5)]
    assert log == ["read 0", "read 1", "send 2", "read 2", "read 3", "send 2", "read 4", "send 1"]
    assert [len(chunk) for _, chunk in sent] == [2, 2, 1]


def test_one_event_is_a_live_capture(
    sent: list[tuple[str, list[Any]]], tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(lesson(1)) + "\n")
    assert main.main(["enqueue", "--file", str(path)]) == 0
    assert sent == [(constants.QUEUE, [lesson(1)])]
    assert capsys.readouterr().out.split() == [ids.event_id_for(lesson(1))]


def test_enqueue_imports_no_pipeline_store_or_embedder() -> None:
    code = (
        "from memsieve.cli import main, events; "
        "main.build_parser('enqueue').parse_args(['enqueue', '--file', '-']); "
        "events.check_item(1, {'namespace': 'a', 'kind': 'retro', 'heading': 'h', "
        "'content': 'c'})"
    )
    heavy = ["psycopg", "memsieve.flow.pipeline", "memsieve.store.postgres"]
    assert loaded_after(code, [*heavy, "memsieve.embedders", "numpy"]) == []


def test_the_producers_redis_path_imports_no_celery_kombu_or_redis_py() -> None:
    # memsieve.delivery.publish writes to a redis:// broker itself: those imports were 0.3 s
    # of `memsieve enqueue`.
    code = (
        "from memsieve import client; from memsieve.delivery import publish; "
        "client.CaptureClient('redis://127.0.0.1:1/0').close()"
    )
    assert loaded_after(code, ["celery", "kombu", "redis"]) == []


def test_a_chunk_ends_at_its_byte_budget_and_many_events_stay_a_backfill(
    sent: list[tuple[str, list[Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(events, "CHUNK_BYTES", 1000)
    big = [lesson(n, content="Pin the build image before the rollout. " * 12) for n in range(3)]
    size = len(json.dumps(big[0]))
    assert 500 < size < 1000  # two do not fit in the budget, one does
    got, problems = events.enqueue(big, Settings.from_env(), chunk=500)
    assert problems == [] and len(got) == 3
    assert sent == [(constants.QUEUE_BACKFILL, [e]) for e in big]
    sent.clear()
    events.enqueue([lesson(1), lesson(2)], Settings.from_env(), chunk=1)
    assert sent == [
        (constants.QUEUE_BACKFILL, [lesson(1)]),
        (constants.QUEUE_BACKFILL, [lesson(2)]),
    ]


def test_a_line_nested_too_deep_is_sent_as_its_text_and_the_rest_goes_on(
    sent: list[tuple[str, list[Any]]], tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """5,000 levels overflow the decoder, 900 would overflow an encoder later: both lines
    are sent as their text (the task records them as invalid_event), every id is printed."""
    very = '{"source": ' + "[" * 5000 + "]" * 5000 + "}"
    deep = '{"source": ' + '{"a": ' * 900 + "1" + "}" * 900 + "}"
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join([json.dumps(lesson(1)), very, deep, json.dumps(lesson(3))]) + "\n")
    code = main.main(["enqueue", "--file", str(path)])
    out, _err = capsys.readouterr()
    assert code == 0
    assert sent == [(constants.QUEUE_BACKFILL, [lesson(1), very, deep, lesson(3)])]
    assert out.splitlines() == [ids.event_id_for(x) for x in (lesson(1), very, deep, lesson(3))]


def test_a_line_holding_an_array_of_events_sends_each_on_its_own(
    sent: list[tuple[str, list[Any]]], tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """One line `[good, bad, good]`: three items (the bad one recorded by the task as
    not_an_event), not one not_an_event row for the whole line."""
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps([lesson(1), 5, lesson(3)]) + "\n[]\n")
    assert main.main(["enqueue", "--file", str(path)]) == 0
    out, _err = capsys.readouterr()
    assert sent == [(constants.QUEUE_BACKFILL, [lesson(1), 5, lesson(3), []])]
    assert len(out.splitlines()) == 4


def test_an_item_no_message_can_carry_is_not_sent_and_says_so(
    sent: list[tuple[str, list[Any]]],
    tmp_path: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A black-box probe: a 50 MB line got an event id printed, went out alone, and the
    worker refused its message whole: the id never reached the ledger (and the producer
    spent 92 s scanning it first)."""
    monkeypatch.setenv("MEMSIEVE_MAX_MESSAGE_BYTES", str(1 << 20))
    huge = lesson(2, content="x" * (2 << 20))
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in (lesson(1), huge, lesson(3))) + "\n")
    code = main.main(["enqueue", "--file", str(path)])
    out, err = capsys.readouterr()
    assert code == events.PARTIAL
    # Its chunk (cut at ~1 MiB) went without it; its neighbours went.
    assert sent == [
        (constants.QUEUE_BACKFILL, [lesson(1)]),
        (constants.QUEUE_BACKFILL, [lesson(3)]),
    ]
    assert out.splitlines()[1] == "-"
    assert "item 2:" in err and "more than a message may carry" in err


def test_a_utf8_byte_order_mark_before_the_first_line_is_not_part_of_it(
    sent: list[tuple[str, list[Any]]], tmp_path: Any
) -> None:
    path = tmp_path / "notepad.jsonl"
    path.write_bytes(
        ("\ufeff" + json.dumps(lesson(1)) + "\n" + json.dumps(lesson(2)) + "\n").encode()
    )
    assert main.main(["enqueue", "--file", str(path)]) == 0
    assert sent == [(constants.QUEUE_BACKFILL, [lesson(1), lesson(2)])]

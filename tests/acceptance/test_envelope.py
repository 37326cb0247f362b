"""Any message a broker can carry ends in a recorded state and the worker stays up (issue 13).

Raw kombu messages -- arbitrary bodies, arities, keyword arguments, headers, content types,
encodings, protocol 1 and 2, oversized -- are published onto a real broker (the embedded
redis-server, and RabbitMQ in a vhost of its own when `rabbitmqctl` can make one). Each
case says what it expects (its events recorded under their ids, or the message recorded
as refused under `raw-<sha256 of its body>` with a reason); at the end the ledger holds
exactly those rows, nothing is pending forever, and the worker is the one that started.
"""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kombu.utils.json import dumps, loads
from memsieve import constants
from memsieve.ids import event_id_for
from memsieve.ops import home
from memsieve.schemas.events import raw_event_id
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from tests.support import db
from tests.support.strategies import json_values, raw_items
from tests.support.workers import Workers, wait_until

MAX_BYTES = 200_000
CAPTURE, FLUSH = constants.TASK_CAPTURE, constants.TASK_FLUSH
EVENT = {
    "namespace": "env",
    "kind": "retro",
    "heading": "Pin images",
    "content": "Pin base images.",
}


@dataclass
class Case:
    body: bytes
    headers: dict[str, Any]
    content_type: str = "application/json"
    content_encoding: str = "utf-8"
    events: list[Any] | None = None  # expected: these items recorded
    reason: set[str] | None = None  # expected: the message recorded with one of these


header_values = st.none() | st.booleans() | st.integers(-(2**31), 2**31) | st.text(max_size=30)
garbage_headers = st.dictionaries(
    st.sampled_from(
        [
            "id", "eta", "expires", "timelimit", "retries", "root_id", "parent_id", "group",
            "argsrepr", "kwargsrepr", "origin", "shadow", "stamps", "ignore_result", "lang", "x",
        ]
    ),
    header_values | st.lists(header_values, max_size=3),
    max_size=6,
)  # fmt: skip
events_part = raw_items | st.lists(raw_items, max_size=3)
embeds = st.sampled_from(
    [
        None,
        {},
        {"callbacks": [{"task": FLUSH, "args": ["x"], "kwargs": {}, "options": {}}]},
        {"chain": [{"task": "no.such.task"}], "errbacks": "junk", "chord": 5},
    ]
)


def _flatten(parts: list[Any]) -> list[Any]:
    out: list[Any] = []
    for p in parts:
        out.extend(p if isinstance(p, (list, tuple)) else [p])
    return out


@st.composite
def cases(draw: Any) -> Case:
    kind = draw(
        st.sampled_from(["v2", "v2", "v2", "v1", "shape", "kwargs", "decode", "unknown", "flush"])
    )
    if kind in ("v2", "v1", "kwargs"):
        args = draw(st.lists(events_part, min_size=0, max_size=3))
        kwargs: dict[str, Any] = {}
        if draw(st.booleans()):
            kwargs["payload"] = draw(events_part)
        if kind == "kwargs":
            kwargs[draw(st.sampled_from(["events", "x", "namespace"]))] = draw(json_values)
        parts = [*args, *([kwargs["payload"]] if "payload" in kwargs else [])]
        items = _flatten(loads(dumps(parts)))
        if kind == "v1":
            body = {"task": CAPTURE, "id": str(uuid.uuid4()), "args": args, "kwargs": kwargs}
            headers = draw(garbage_headers)
            headers.pop("task", None)
            case = Case(dumps(body).encode(), headers)
        else:
            headers = {**draw(garbage_headers), "task": CAPTURE}
            case = Case(dumps([args, kwargs, draw(embeds)]).encode(), headers)
        if not items:
            case.reason = {"invalid_task_message"}
        else:
            case.events = items
            if kind == "kwargs":
                # The events are recorded on their own; the keywords, as the message's row.
                case.reason = {"unexpected_keyword_argument"}
        return case
    if kind == "shape":
        body = draw(
            json_values.filter(lambda v: not isinstance(v, list))
            | st.sampled_from(
                [
                    [[EVENT], {}, {}, {}],
                    [EVENT],
                    ["not a list", {}, {}],
                    [[EVENT], "not a dict", {}],
                    [],
                ]
            )
        )
        return Case(
            dumps(body).encode(), {"task": CAPTURE, "id": "x"}, reason={"invalid_task_message"}
        )
    if kind == "decode":
        body, ctype, cenc, extra = draw(
            st.sampled_from(
                [
                    (b"\xff\xfe\x00 not utf-8", "application/json", "utf-8", {}),
                    (b"{not json", "application/json", "utf-8", {}),
                    (
                        pickle.dumps([[EVENT], {}, {}]),
                        "application/x-python-serialize",
                        "binary",
                        {},
                    ),
                    (b"args: [1]", "application/x-yaml", "utf-8", {}),
                    (b"hello", "text/plain", "utf-8", {}),
                    (
                        b"[[], {}, {}]",
                        "application/json",
                        "utf-8",
                        {"compression": "application/x-gzip"},
                    ),
                    (b"[" * 100_000 + b"]" * 100_000, "application/json", "utf-8", {}),
                ]
            )
        )
        return Case(
            body, {"task": CAPTURE, "id": "d", **extra}, ctype, cenc, reason={"undecodable_message"}
        )
    if kind == "unknown":
        name = draw(
            st.sampled_from(["celery.chord_unlock", "celery.accumulate", "celery.backend_cleanup"])
            | st.text(min_size=1, max_size=30).filter(lambda t: t not in (CAPTURE, FLUSH))
        )
        return Case(
            dumps([[EVENT], {}, {}]).encode(), {"task": name, "id": "u"}, reason={"unknown_task"}
        )
    args = draw(st.sampled_from([[], [1], ["a", "b"], [None], [["ns"]]]))
    return Case(dumps([args, {}, {}]).encode(), {"task": FLUSH, "id": "f"}, reason={"invalid_task_message"})  # fmt: skip


def _rabbit_vhost() -> Iterator[str]:
    if shutil.which("rabbitmqctl") is None:
        pytest.skip("no rabbitmqctl to make an isolated vhost")
    vhost = f"memsieve-test-{uuid.uuid4().hex[:10]}"
    try:
        subprocess.run(
            ["rabbitmqctl", "add_vhost", vhost], check=True, capture_output=True, timeout=60
        )
        subprocess.run(
            ["rabbitmqctl", "set_permissions", "-p", vhost, "guest", ".*", ".*", ".*"],
            check=True,
            capture_output=True,
            timeout=60,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        pytest.skip(f"RabbitMQ not available: {exc}")
    try:
        yield f"amqp://guest:guest@127.0.0.1:5672/{vhost}"
    finally:
        subprocess.run(["rabbitmqctl", "delete_vhost", vhost], capture_output=True, timeout=60)


@pytest.fixture(params=["redis", "rabbitmq"])
def broker_url(request: pytest.FixtureRequest, redis_url: str) -> Iterator[str]:
    if request.param == "redis":
        yield redis_url
    else:
        yield from _rabbit_vhost()


def _garbage_items() -> list[bytes]:
    """Redis list items that are not kombu envelopes, or are broken ones."""
    props = {
        "delivery_tag": "t1",
        "delivery_info": {"exchange": "memsieve", "routing_key": "memsieve"},
    }
    envelopes: list[Any] = [
        {"properties": {}},
        {"properties": {"delivery_tag": 5, "delivery_info": {}}},
        {"properties": {"delivery_tag": "t2"}},
        {"properties": {**props, "body_encoding": "base64"}, "body": "***not base64***"},
        {"properties": {**props, "body_encoding": "rot13"}, "body": "abc"},
        {"properties": props, "headers": ["not", "a", "dict"], "body": "x"},
        {"properties": props, "body": 12},
    ]
    return [b"\xff\xfe not json", b'{"hello": "world"}', b"[1, 2, 3]"] + [
        json.dumps(e).encode() for e in envelopes
    ]


def test_any_message_ends_in_one_recorded_state_and_the_worker_stays_up(
    workers: Workers, store: Store, env: dict[str, str], broker_url: str
) -> None:
    extra = {"MEMSIEVE_BROKER_URL": broker_url, "MEMSIEVE_MAX_MESSAGE_BYTES": str(MAX_BYTES)}
    env = {**env, **extra}
    from memsieve.app import configure

    app = configure(replace(Settings.from_env(env).resolved()))
    proc = workers.start(concurrency=2, extra_env=extra)
    key = home.install_key(Settings.from_env(env).key_path)
    queue = app.amqp.queues[constants.QUEUE]
    expect_events: set[str] = set()
    expect_messages: dict[str, set[str]] = {}
    described: dict[str, str] = {}

    with app.connection_for_write() as conn:
        bound = queue(conn.default_channel)
        bound.declare()
        producer = conn.Producer()

        def publish(case: Case) -> None:
            producer.publish(
                case.body,
                exchange=queue.exchange,
                routing_key=queue.routing_key,
                headers=case.headers,
                content_type=case.content_type,
                content_encoding=case.content_encoding,
                retry=True,
            )
            if case.events is not None:
                for i in case.events:
                    eid = event_id_for(i, key)
                    expect_events.add(eid)
                    described[eid] = f"event {i!r:.200} of {case.headers!r:.200}"
            if case.reason is not None:
                eid = raw_event_id(case.body)
                expect_messages.setdefault(eid, set()).update(case.reason)
                described[eid] = f"message {case.body!r:.200} {case.headers!r:.200} {case.reason}"

        @settings(
            max_examples=120, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        @given(cases())
        def send(case: Case) -> None:
            publish(case)

        send()
        # Too large: refused whole, whatever it holds.
        big = dumps([[{**EVENT, "content": "x" * 19_000}] * 12, {}, {}]).encode()
        assert len(big) > MAX_BYTES
        publish(Case(big, {"task": CAPTURE, "id": "big"}, reason={"message_too_large"}))
        # A compression bomb under the wire limit (kombu inflates a body its `compression`
        # header names as it builds the message): refused before it is inflated whole.
        bomb = zlib.compress(bytes(500 * MAX_BYTES))
        assert len(bomb) < MAX_BYTES
        gz = {"compression": "application/x-gzip"}
        publish(Case(bomb, {"task": CAPTURE, "id": "bomb", **gz}, reason={"message_too_large"}))
        # Compressed within the limit: read as any other message.
        zipped = [{**EVENT, "heading": "Zipped", "content": "A compressed lesson is read."}]
        packed = zlib.compress(dumps([zipped, {}, {}]).encode())
        publish(Case(packed, {"task": CAPTURE, "id": "zipped", **gz}, events=zipped))
        # Unknown keywords: the events are written, the keywords recorded as the message's
        # row, and what they held is not read as an event.
        kw = [{**EVENT, "heading": f"Kw {n}", "content": f"Keyword case lesson {n}."} for n in (1, 2, 3)]  # fmt: skip
        publish(
            Case(
                dumps([[kw[0]], {"payload": kw[1], "events": [kw[2]]}, {}]).encode(),
                {"task": CAPTURE, "id": "kw"},
                events=kw[:2],
                reason={"unexpected_keyword_argument"},
            )
        )
        # An event nested 900 levels deep between two good ones: the good ones are written,
        # the deep one is the message's row. (Celery could not pickle it for its pool: the
        # message stayed unacked in a pool slot, the worker stalled, the good ones were lost.)
        # The JSON is built as text: encoding 900 levels would overflow this process's stack.
        good = [{**EVENT, "heading": f"Deep {n}", "content": f"Deep case lesson {n}."} for n in (1, 2)]  # fmt: skip
        deep = dumps(EVENT)[:-1] + ', "source": ' + '{"a": ' * 900 + "1" + "}" * 900 + "}"
        publish(
            Case(
                f"[[[{dumps(good[0])}, {deep}, {dumps(good[1])}]], {{}}, {{}}]".encode(),
                {"task": CAPTURE, "id": "deep"},
                events=good,
                reason={"invalid_event"},
            )
        )
        # 5,000 levels: the body cannot be decoded whole; its events are read one by one.
        good2 = [{**EVENT, "heading": f"Deeper {n}", "content": f"Deeper case lesson {n}."} for n in (1, 2)]  # fmt: skip
        very = dumps(EVENT)[:-1] + ', "source": ' + "[" * 5000 + "]" * 5000 + "}"
        publish(
            Case(
                f"[[{dumps(good2[0])}, {very}, {dumps(good2[1])}], {{}}, {{}}]".encode(),
                {"task": CAPTURE, "id": "deeper"},
                events=good2,
                reason={"invalid_event"},
            )
        )
        # An integer past Python's 4,300 digits in one event (valid JSON), and invalid UTF-8
        # in another's string: only those two are lost (a probe: the message was refused
        # whole as undecodable and its good events never recorded).
        good3 = [{**EVENT, "heading": f"Bigint {n}", "content": f"Big number lesson {n}."} for n in (1, 2)]  # fmt: skip
        big = '{"tags": [' + "7" * 5000 + "]}"
        utf = b'{"heading": "bad \xff\xfe bytes"}'
        publish(
            Case(
                f"[[{dumps(good3[0])}, {big}, ".encode()
                + utf
                + f", {dumps(good3[1])}], {{}}, {{}}]".encode(),
                {"task": CAPTURE, "id": "bigint"},
                events=good3,
                reason={"invalid_event"},
            )
        )
        # A well-formed message after all of that is written.
        publish(
            Case(dumps([[EVENT], {}, {}]).encode(), {"task": CAPTURE, "id": "ok"}, events=[EVENT])
        )
    if broker_url.startswith("redis"):
        client = redis.Redis.from_url(broker_url)
        for item in _garbage_items():
            client.lpush(constants.QUEUE, item)
            expect_messages[raw_event_id(item)] = {"not_a_task_message"}
        client.close()

    all_ids = expect_events | set(expect_messages)

    def settled() -> bool:
        # Ids are per namespace: an id sent in two namespaces has a row in each.
        rows = db.query(
            store,
            "SELECT event_id, bool_and(status <> 'pending') AS done FROM events"
            " WHERE event_id = ANY(%s) GROUP BY 1",
            (sorted(all_ids),),
        )
        return sum(1 for r in rows if r["done"]) == len(all_ids)

    done = wait_until(settled, timeout=150, interval=0.5)
    rows = db.query(store, "SELECT event_id, status, reason FROM events ORDER BY received_at")
    by_id = {r["event_id"]: r for r in reversed(rows)}  # the first row of each id
    assert not [r for r in rows if r["status"] == "pending"]
    missing = sorted(all_ids - set(by_id))
    if not done or missing:
        Path("/tmp/envelope-worker.log").write_text(workers.logs())
    assert done and not missing, [described.get(m, m) for m in missing[:5]]
    # Exactly these ids, plus one row for each payload that reused an event id another
    # payload had in its namespace (e.g. `"event_id": "ok-1"` with other text).
    extra = [by_id[e] for e in set(by_id) - all_ids]
    assert all(r["reason"] == "event_id_reused" for r in extra), extra[:5]
    reused = db.query(
        store,
        "SELECT reused_id FROM events WHERE event_id = ANY(%s)",
        ([r["event_id"] for r in extra],),
    )
    assert {r["reused_id"] for r in reused} <= expect_events
    # A message is recorded once: its raw id has one row.
    counts = db.query(
        store,
        "SELECT event_id, count(*)::int AS n FROM events WHERE event_id = ANY(%s) GROUP BY 1",
        (sorted(set(expect_messages) - expect_events),),
    )
    assert {r["n"] for r in counts} <= {1}
    for eid, reasons in expect_messages.items():
        if eid in expect_events:
            # A message whose whole body is, byte for byte, an item another message carried
            # (`0`, `"x"`): one id, one row, whichever came first.
            continue
        assert (by_id[eid]["status"], by_id[eid]["reason"] in reasons) == ("rejected", True), (
            by_id[eid],
            reasons,
        )
    assert all(r["reason"] for r in rows if r["status"] in ("rejected", "dead"))
    ok = event_id_for(EVENT, key)
    assert by_id[ok]["status"] == "written"
    assert [by_id[event_id_for(e, key)]["status"] for e in kw[:2]] == ["written", "written"]
    assert event_id_for(kw[2], key) not in by_id
    assert proc.poll() is None, "the worker died"
    logs = workers.logs()
    assert "Unrecoverable error" not in logs
    assert "Traceback" not in logs

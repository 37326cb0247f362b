"""Bad input through a real broker: every item ends in exactly one recorded state, the
worker stays up, and a refused secret is found nowhere afterwards (issue 3)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memsieve import constants
from memsieve.capture import secrets
from memsieve.ids import event_id_for
from memsieve.ops import home
from memsieve.ops.services import EmbeddedPostgres
from memsieve.schemas.events import raw_event_id
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from tests.support import db
from tests.support.strategies import raw_items
from tests.support.workers import Workers

DATA = Path(__file__).resolve().parents[1] / "data"


def _terminal_count(store: Store, ids: set[str]) -> tuple[int, int]:
    """(ids all of whose rows are terminal, ids recorded). Ids are per namespace: one id
    sent in two namespaces has a row in each."""
    rows = db.query(
        store,
        "SELECT event_id, bool_and(status <> 'pending') AS done FROM events"
        " WHERE event_id = ANY(%s) GROUP BY 1",
        (sorted(ids),),
    )
    return sum(1 for r in rows if r["done"]), len(rows)


def _key(env: dict[str, str]) -> bytes:
    """The install key the workers use (their MEMSIEVE_HOME): refused events' ids are keyed."""
    return home.install_key(Settings.from_env(env).key_path)


def test_arbitrary_items_each_end_in_one_recorded_state_and_the_worker_survives(
    workers: Workers, store: Store, celery_app: Any, env: dict[str, str]
) -> None:
    key = _key(env)
    sent: set[str] = set()
    items_by_id: dict[str, Any] = {}

    @settings(
        max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(st.lists(raw_items, min_size=1, max_size=4), st.booleans())
    def send(items: list[Any], as_list: bool) -> None:
        payload: Any = items if as_list or len(items) > 1 else items[0]
        celery_app.send_task(constants.TASK_CAPTURE, args=[payload], queue=constants.QUEUE)
        # By contract a list payload is a list of events.
        delivered = payload if isinstance(payload, list) else [payload]
        sent.update(event_id_for(i, key) for i in delivered)
        items_by_id.update((event_id_for(i, key), i) for i in delivered)

    send()
    # Things that are not Celery task messages at all, straight onto the queue.
    client = redis.Redis.from_url(celery_app.conf.broker_url)
    garbage = (b"\xff\xfe not json", b'{"hello": "world"}', b"[1, 2, 3]")
    for item in garbage:
        client.lpush(constants.QUEUE, item)
    client.close()
    sent.update(raw_event_id(g) for g in garbage)

    # A draining worker: exit 0 means it took everything and is still alive to say so.
    workers.start(concurrency=2, drain=120)
    assert workers.wait_drained() == [0], "the worker died or did not drain"
    if _terminal_count(store, sent) != (len(sent), len(sent)):
        have = {
            r["event_id"]
            for r in db.query(
                store, "SELECT event_id FROM events WHERE event_id = ANY(%s)", (sorted(sent),)
            )
        }
        missing = [repr(items_by_id[i])[:300] for i in sorted(sent - have)][:5]
        Path("/tmp/badinput-worker.log").write_text(workers.logs())
        raise AssertionError(f"{len(sent - have)} ids never recorded, e.g. {missing}")
    # Every rejection says why, in a machine-readable reason.
    rows = db.query(store, "SELECT status, reason FROM events WHERE status IN ('rejected', 'dead')")
    assert rows and all(r["reason"] for r in rows)
    reasons = {r["reason"] for r in rows}
    assert {"invalid_event", "not_an_event"} <= reasons
    # The raw garbage was recorded too, under ids derived from its bytes.
    garbage_rows = db.query(
        store,
        "SELECT reason FROM events WHERE event_id = ANY(%s)",
        ([raw_event_id(g) for g in garbage],),
    )
    assert [r["reason"] for r in garbage_rows] == ["not_a_task_message"] * 3
    assert "Traceback" not in workers.logs()


def _corpus() -> list[str]:
    return [
        json.loads(line)["text"]
        for line in (DATA / "secrets_corpus.jsonl").read_text().splitlines()
        if line.strip()
    ]


def test_refused_secrets_are_nowhere_in_the_database_or_the_logs(
    workers: Workers,
    store: Store,
    celery_app: Any,
    pg_server: EmbeddedPostgres,
    tmp_path: Path,
    env: dict[str, str],
) -> None:
    corpus = _corpus()
    assert len(corpus) >= 30
    needles = [t[f.start : f.end] for t in corpus for f in secrets.find_secrets(t)]
    assert len(needles) >= len(corpus)
    events = [
        {
            "namespace": "sec",
            "kind": "retro",
            "heading": f"lesson {i}",
            "content": t,
            "tags": ["creds"],
            "source": {"agent": "a", "session": "s"},
        }
        for i, t in enumerate(corpus)
    ]
    # Half as single messages, half as one backfill list.
    for e in events[: len(events) // 2]:
        celery_app.send_task(constants.TASK_CAPTURE, args=[e], queue=constants.QUEUE)
    celery_app.send_task(
        constants.TASK_CAPTURE, args=[events[len(events) // 2 :]], queue=constants.QUEUE
    )
    key = _key(env)
    ids = {event_id_for(e, key) for e in events}
    workers.start(concurrency=1, drain=60)
    assert workers.wait_drained() == [0], workers.logs()[-2000:]
    assert _terminal_count(store, ids) == (len(ids), len(ids))

    rows = db.query(store, "SELECT status, reason, count(*)::int AS n FROM events GROUP BY 1, 2")
    assert rows == [{"status": "rejected", "reason": "secret", "n": len(corpus)}]
    assert db.query(store, "SELECT count(*)::int AS n FROM memories")[0]["n"] == 0

    dump = subprocess.run(
        [str(pg_server.bindir / "pg_dump"), "--data-only", store.url],
        check=True,
        capture_output=True,
        text=True,
        user=pg_server.user,
    ).stdout
    assert "REDACTED" in dump
    logs = workers.logs()
    for needle in needles:
        assert needle not in dump, f"secret of {len(needle)} chars found in the database dump"
        assert needle not in logs, "secret found in the worker logs"

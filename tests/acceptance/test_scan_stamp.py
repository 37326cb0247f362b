"""Scan stamps end to end: real worker processes, the real broker, real messages.

`memsieve enqueue` stamps the events it scanned clean (memsieve.delivery.stamp) and the
worker does not scan them again: its task results say how many it spared. A secret put
into a stamped message afterwards (a field changed after stamping), one behind a forged
stamp, and one with no stamp are each scanned by the worker and refused; no byte of any
of them reaches the store."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from memsieve import constants
from memsieve.capture import policy
from memsieve.delivery import stamp
from memsieve.ops import home
from memsieve.schemas.events import CaptureEvent
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from tests.support import db
from tests.support.cli import run
from tests.support.workers import Workers, wait_until

GHP = "ghp_" + "Qw7Er6Ty5Ui4Op3As2Df1Gh0Jk9Lz8Xc7Vb6N"
AWS = "AKIA" + "Q7W6E5R4T3Y2U1I0O9P8"


def _lesson(n: int, **extra: Any) -> dict[str, Any]:
    return {
        "namespace": "stamped",
        "kind": "retro",
        "heading": f"Pin images {n}",
        "content": f"Pin base images before rollout {n}; a floating tag broke staging.",
        "event_id": f"stamp-{n}",
        **extra,
    }


def _rows(store: Store, ids: list[str]) -> dict[str, dict[str, Any]]:
    rows = db.query(
        store,
        "SELECT event_id, status, reason, heading, content FROM events WHERE event_id = ANY(%s)",
        (ids,),
    )
    return {r["event_id"]: r for r in rows}


def _stamped_counts(logs: str) -> list[int]:
    return [int(n) for n in re.findall(r"'stamped': (\d+)", logs)]


def test_stamped_events_are_spared_a_second_scan_and_a_secret_behind_a_stamp_is_refused(
    workers: Workers, store: Store, celery_app: Any, env: dict[str, str], tmp_path: Path
) -> None:
    workers.start(concurrency=1)
    key_file = Settings.from_env(env).key_path
    assert wait_until(key_file.exists, timeout=60), "the worker never made the install key"

    # The trusted producer: `memsieve enqueue` on the same install stamps what it scanned.
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(_lesson(n)) for n in range(3)) + "\n")
    out = run(env, "enqueue", "--file", str(path))
    assert out.returncode == 0, out.stderr
    assert wait_until(lambda: len(_rows(store, [f"stamp-{n}" for n in range(3)])) == 3)
    assert wait_until(lambda: 3 in _stamped_counts(workers.logs()), timeout=30)

    # A producer (or anyone on the broker) that puts a secret into a stamped message.
    skey = stamp.stamp_key(home.install_key(key_file))

    def stamp_of(raw: dict[str, Any]) -> str | None:
        return stamp.make(skey, policy.event_fields(CaptureEvent(**raw)))

    clean = _lesson(10)
    tampered = {**_lesson(11), "content": f"Pin base images; the deploy token is {GHP}."}
    forged = _lesson(12, tags=["ci", AWS])
    bare = _lesson(13, heading=f"Leak {GHP}")
    items = [clean, tampered, forged, bare]
    stamps = [stamp_of(clean), stamp_of(_lesson(11)), "0" * 64, None]
    celery_app.send_task(
        constants.TASK_CAPTURE,
        args=[items],
        queue=constants.QUEUE,
        headers={stamp.HEADER: stamps},
    )
    ids = [i["event_id"] for i in items]
    assert wait_until(lambda: len(_rows(store, ids)) == 4, timeout=60), workers.logs()[-3000:]
    rows = _rows(store, ids)
    assert rows["stamp-10"]["status"] != "rejected"
    for eid in ("stamp-11", "stamp-12", "stamp-13"):
        assert (rows[eid]["status"], rows[eid]["reason"]) == ("rejected", "secret")
    # Only the untouched stamped event was spared the scan.
    assert wait_until(lambda: 1 in _stamped_counts(workers.logs()), timeout=30)
    dump = json.dumps(db.query(store, "SELECT * FROM events"), default=str)
    assert GHP not in dump and AWS not in dump


def test_backfill_stamps_what_its_reader_scanned_clean_and_the_worker_still_refuses_a_secret(
    workers: Workers, store: Store, env: dict[str, str], tmp_path: Path
) -> None:
    workers.start(concurrency=1)
    key_file = Settings.from_env(env).key_path
    assert wait_until(key_file.exists, timeout=60), "the worker never made the install key"
    items = [_lesson(20 + n) for n in range(4)]
    items.append({**_lesson(24), "content": f"Rotate the deploy token {GHP} every month."})
    path = tmp_path / "old.jsonl"
    path.write_text("\n".join(json.dumps(i) for i in items) + "\n")
    out = run(env, "backfill", str(path), "--no-progress", "--json")
    assert out.returncode == 0, out.stderr
    rows = _rows(store, [i["event_id"] for i in items])
    assert len(rows) == 5, workers.logs()[-3000:]
    assert (rows["stamp-24"]["status"], rows["stamp-24"]["reason"]) == ("rejected", "secret")
    assert all(rows[f"stamp-{20 + n}"]["status"] == "written" for n in range(4))
    # The four clean events went out stamped (the worker spared their scan); the fifth was
    # sent unstamped and scanned by the worker.
    assert wait_until(lambda: 4 in _stamped_counts(workers.logs()), timeout=30)
    dump = json.dumps(db.query(store, "SELECT * FROM events"), default=str)
    assert GHP not in dump


def test_mcp_remember_stamps_a_clean_event(
    workers: Workers, store: Store, settings: Settings
) -> None:
    from memsieve.mcp.backend import Backend, Scope

    workers.start(concurrency=1)
    assert wait_until(settings.key_path.exists, timeout=60), "the worker never made the key"
    backend = Backend(settings, Scope(("stamped",)), worker="no")
    try:
        lesson = _lesson(30)
        out = backend.remember(
            kind="retro", heading=lesson["heading"], content=lesson["content"], wait_seconds=60
        )
    finally:
        backend.close()
    assert out["status"] == "written", out
    assert wait_until(lambda: 1 in _stamped_counts(workers.logs()), timeout=30), workers.logs()[
        -2000:
    ]

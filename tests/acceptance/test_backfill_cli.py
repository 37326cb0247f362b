"""`memsieve backfill` as a user runs it: interrupted, resumed, run again; exact counts."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from memsieve.store.postgres import Store

from tests.data.make_retros import generate
from tests.support import db
from tests.support.paths import ROOT
from tests.support.workers import Workers, wait_until


def _backfill(
    env: dict[str, str], *args: str, timeout: float = 120
) -> tuple[int, dict[str, Any], str]:
    p = subprocess.run(
        [sys.executable, "-m", "memsieve.cli.main", "backfill", *args, "--json"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    out = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else {}
    return p.returncode, out, p.stderr


def _ledger(store: Store) -> list[tuple[Any, ...]]:
    rows = db.query(
        store,
        "SELECT status, decision, reason, count(*)::int AS n FROM events GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
    )
    return [tuple(r.values()) for r in rows]


def _memories(store: Store) -> tuple[Any, ...]:
    r = db.query(
        store,
        "SELECT count(*)::int AS n, count(*) FILTER (WHERE deleted_at IS NULL)::int AS live,"
        " max(created_at) AS last FROM memories",
    )[0]
    return r["n"], r["live"], r["last"]


def test_interrupted_backfill_resumes_without_loss_or_duplicates_and_a_rerun_changes_nothing(
    env: dict[str, str], workers: Workers, store: Store, tmp_path: Path
) -> None:
    retros = tmp_path / "retros"
    exp = generate(retros, files=60, lessons=2)
    assert (exp.lessons, exp.repeats, exp.trivia, exp.secrets) == (120, 2, 1, 0)
    admitted = exp.lessons - exp.trivia - exp.secrets

    # 1. No worker yet: the backfill sends one window (20 events) and waits; Ctrl-C.
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memsieve.cli.main",
            "backfill",
            str(retros),
            "--namespace",
            "bf",
            "--chunk",
            "10",
            "--window",
            "20",
            "--json",
        ],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ckdir = Path(env["MEMSIEVE_HOME"]) / "backfill"

    def checkpoint_sent() -> int:
        files = list(ckdir.glob("*.json")) if ckdir.exists() else []
        return json.loads(files[0].read_text())["sent"] if files else 0

    assert wait_until(lambda: checkpoint_sent() == 20, timeout=60)
    time.sleep(1.0)  # it is waiting for the window to drain, not sending more
    assert checkpoint_sent() == 20
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    first = json.loads(out.strip().splitlines()[-1])
    assert first["interrupted"] is True and first["sent"] == 20
    assert first["events"] == 120 and first["unseen"] == 120  # nothing processed yet

    # 2. Workers up, run again: it resumes after the 20 (they are on the broker) and finishes.
    workers.start(concurrency=2)
    code, second, err = _backfill(env, str(retros), "--namespace", "bf", "--chunk", "10")
    assert code == 0, err
    assert "resuming: 20 of 120 events were sent before" in err
    assert second["interrupted"] is False and second["sent"] == 120
    assert second["events"] == 120 and second["unseen"] == 0 and second["pending"] == 0
    assert second["rejected"] == {"trivia": 1}
    assert second["dead"] == {}
    assert second["inserted"] + second["superseded"] + second["merged"] == admitted
    # Exactly one ledger row per event: nothing lost, nothing recorded twice.
    assert db.query(store, "SELECT count(*)::int AS n FROM events")[0]["n"] == 120
    # The summary is the ledger's, and the ledger agrees with the memories table.
    n_rows, live, _ = _memories(store)
    assert n_rows == second["inserted"] + second["superseded"]
    assert live == second["inserted"]
    ledger, memories = _ledger(store), _memories(store)

    # 3. A second full run (checkpoint says done) and a forced resend change nothing. The
    # workers are stopped first: whatever a run sends waits on the broker until a worker
    # that drains the queue and exits has processed it, so the check after its exit is final.
    workers.stop_all()
    for extra in ([], ["--restart"]):
        code, again, err = _backfill(env, str(retros), "--namespace", "bf", *extra)
        assert code == 0, err
        assert {k: again[k] for k in second if k not in ("checkpoint",)} == {
            k: second[k] for k in second if k not in ("checkpoint",)
        }
        drained = workers.start(concurrency=2, drain=120)
        assert drained.wait(timeout=180) == 0, workers.logs()[-3000:]
        assert _ledger(store) == ledger
        assert _memories(store) == memories


def test_dry_run_reports_without_writing(env: dict[str, str], store: Store, tmp_path: Path) -> None:
    retros = tmp_path / "retros"
    exp = generate(retros, files=100, lessons=2)
    code, out, err = _backfill(env, str(retros), "--namespace", "bf", "--dry-run")
    assert code == 0, err
    would = out["would"]
    assert would["events"] == exp.lessons
    assert would["rejected"] == {"secret": exp.secrets, "trivia": exp.trivia}
    assert would["merged"] == exp.repeats
    assert (
        would["inserted"] + would["superseded"] + would["merged"]
        == exp.lessons - exp.trivia - exp.secrets
    )
    assert db.query(store, "SELECT count(*)::int AS n FROM events")[0]["n"] == 0
    assert db.query(store, "SELECT count(*)::int AS n FROM memories")[0]["n"] == 0
    assert db.query(store, "SELECT count(*)::int AS n FROM embedding_cache")[0]["n"] == 0
    assert db.query(store, "SELECT count(*)::int AS n FROM store_meta")[0]["n"] == 0


def test_an_item_too_large_for_a_message_is_recorded_and_its_neighbours_are_written(
    env: dict[str, str], workers: Workers, store: Store, tmp_path: Path
) -> None:
    """Found by a black-box probe: a 50 MB line went out in one message with its two
    neighbours; the worker refused the message whole (message_too_large), the three
    events were never recorded, and the backfill waited for ever. Now the chunk ends at
    ~1 MiB of JSON, and an item no message can carry is recorded here, not sent."""
    limit = 2 << 20
    env = {**env, "MEMSIEVE_MAX_MESSAGE_BYTES": str(limit)}
    lines = [
        {"namespace": "big", "kind": "retro", "heading": "Pin images",
         "content": "Pin base images before a rollout; a floating tag broke staging."},
        {"namespace": "big", "kind": "retro", "heading": "Huge paste",
         "content": "x" * (3 * limit), "event_id": "evt-huge-paste"},
        {"namespace": "big", "kind": "retro", "heading": "Budget alerts",
         "content": "Alert on 80% of the monthly cloud budget, not 100%."},
        # Too long for the schema but not for a message: the worker records it itself.
        {"namespace": "big", "kind": "retro", "heading": "Long paste",
         "content": "y" * (limit // 4), "event_id": "evt-long-paste"},
    ]  # fmt: skip
    src = tmp_path / "big.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    workers.start(concurrency=2)
    code, out, err = _backfill(env, str(src), timeout=240)
    assert code == 0, err
    assert out["events"] == 4 and out["unseen"] == 0 and out["pending"] == 0, out
    assert out["rejected"] == {"invalid_event": 2}, out
    assert out["inserted"] == 2, out
    rows = db.query(
        store,
        "SELECT event_id, status, reason, detail FROM events WHERE status = 'rejected'"
        " ORDER BY event_id",
    )
    assert [(r["event_id"], r["reason"]) for r in rows] == [
        ("evt-huge-paste", "invalid_event"),
        ("evt-long-paste", "invalid_event"),
    ]
    assert "larger than a message may be" in rows[0]["detail"]
    # Nothing was refused as a whole message.
    assert db.query(store, "SELECT count(*)::int AS n FROM events")[0]["n"] == 4

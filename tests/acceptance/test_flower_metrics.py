"""Operators' view: Flower (with basic auth) shows useful, text-free tasks; /metrics answers."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from memsieve.cli.service import flower_command
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from tests.support.http import get as _get
from tests.support.paths import ROOT
from tests.support.workers import Workers, wait_until

SECRETISH = "the-text-of-this-lesson-must-not-show"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_flower_shows_tasks_without_text_and_metrics_count_decisions(
    env: dict[str, str], workers: Workers, settings: Settings, store: Store, tmp_path: Path
) -> None:
    auth = "ops:s3cret-pass"
    fport, mport = _free_port(), _free_port()
    flower_settings = replace(settings, flower_port=fport, flower_basic_auth=auth)
    log = open(tmp_path / "flower.log", "wb")
    cmd, flower_env = flower_command(flower_settings, env)
    assert auth not in " ".join(cmd) and "redis://" not in " ".join(cmd)
    flower = subprocess.Popen(
        cmd,
        env=flower_env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        workers.start(concurrency=2, extra_env={"MEMSIEVE_METRICS_PORT": str(mport)})
        base = f"http://127.0.0.1:{fport}"
        assert wait_until(lambda: _get(f"{base}/healthcheck")[0] == 200, timeout=60)
        assert _get(f"{base}/api/tasks")[0] == 401  # auth is enforced, the API too
        assert _get(f"{base}/api/tasks", "ops:wrong")[0] == 401

        retros = tmp_path / "retros"
        retros.mkdir()
        (retros / "r.md").write_text(
            "# Retro\n\n"
            + "".join(
                f"## lesson {i}\n\nAlways pin the client {i * 7919}; {SECRETISH} {i}.\n\n"
                for i in range(12)
            )
        )
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "memsieve.cli.main",
                "backfill",
                str(retros),
                "--namespace",
                "ops",
                "--chunk",
                "5",
                "--json",
            ],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert p.returncode == 0, p.stderr
        summary = json.loads(p.stdout.strip().splitlines()[-1])
        assert summary["inserted"] + summary["superseded"] + summary["merged"] == 12

        def captured() -> list[dict[str, Any]]:
            code, body = _get(f"{base}/api/tasks", auth)
            tasks = json.loads(body).values() if code == 200 else []
            return [
                t
                for t in tasks
                if t.get("name") == "memsieve.capture" and t.get("state") == "SUCCESS"
            ]

        assert wait_until(lambda: len(captured()) == 3, timeout=60), log.name
        code, body = _get(f"{base}/api/tasks", auth)
        assert SECRETISH not in body and "Always pin" not in body
        for t in captured():
            assert "event(s) ns=ops first=bf-" in t["args"], t["args"]
            assert json.loads(t["result"].replace("'", '"')).keys() <= {
                "pending",
                "rejected",
                "duplicate",
                "stamped",  # events whose producer's scan stamp spared a second scan
            }
        assert any(t.get("name") == "memsieve.flush" for t in json.loads(body).values())

        code, text = _get(f"http://127.0.0.1:{mport}/metrics")
        assert code == 200
        written = sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("memsieve_decisions_total{") and 'decision="dead"' not in line
        )
        assert written == 12, text
        assert 'memsieve_embedding_requests_total{model="hashing-v1-384",outcome="ok"}' in text
        assert "memsieve_lock_wait_seconds_count" in text
        assert "memsieve_inbox_pending_total 0.0" in text
        assert "memsieve_inbox_up 1.0" in text
        assert SECRETISH not in text and auth not in text
    finally:
        flower.kill()
        flower.wait(timeout=10)
        log.close()

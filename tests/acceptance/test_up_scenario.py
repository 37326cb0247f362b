"""The article's scenario, as a new user runs it: `memsieve up` in one terminal (embedded
PostgreSQL + Redis, a worker with the offline MiniLM embedder, Flower), the CLI in another."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from memsieve.ops.services import free_port

from tests.support.paths import ROOT
from tests.support.workers import wait_until

pytestmark = [pytest.mark.local_model, pytest.mark.slow]

REWORDINGS = [
    "This project uses kebab-case for filenames.",
    "Filenames in this project are kebab-case.",
    "Use kebab-case when naming files in this project.",
    "In this repo, files are named in kebab-case.",
    "Name files with kebab-case in this project.",
]


def cli(env: dict[str, str], *args: str) -> Any:
    out = subprocess.run(
        [sys.executable, "-m", "memsieve.cli.main", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout) if "--json" in args else out.stdout


def enqueue(env: dict[str, str], content: str, heading: str = "File naming") -> str:
    ids = cli(
        env,
        "enqueue",
        "--namespace",
        "demo",
        "--kind",
        "retro",
        "--heading",
        heading,
        "--content",
        content,
        "--json",
    )
    return str(ids[0])


def event(env: dict[str, str], event_id: str) -> dict[str, Any]:
    rows = cli(env, "events", "--event-id", event_id, "--json")
    return rows[0] if rows else {}


def written(env: dict[str, str], event_id: str) -> dict[str, Any]:
    assert wait_until(
        lambda: event(env, event_id).get("status") == "written", timeout=180, interval=0.5
    )
    return event(env, event_id)


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.3)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_five_rewordings_end_as_one_live_memory_with_five_versions(
    tmp_path: Path, services_home: Path
) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MEMSIEVE_") and k != "OPENAI_API_KEY"
    }
    flower = free_port()
    env.update(
        MEMSIEVE_HOME=str(services_home),
        MEMSIEVE_FLOWER_PORT=str(flower),
        MEMSIEVE_METRICS_PORT=str(free_port()),
        MEMSIEVE_CONCURRENCY="1",
        PYTHONUNBUFFERED="1",
    )
    log = open(tmp_path / "up.log", "wb")
    up = subprocess.Popen(
        [sys.executable, "-m", "memsieve.cli.main", "up"],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        assert wait_until(
            lambda: "memsieve is up" in (tmp_path / "up.log").read_text(), timeout=120
        )
        assert "embedder   local" in (tmp_path / "up.log").read_text()

        ids = []
        for text in REWORDINGS:
            ids.append(enqueue(env, text))
            written(env, ids[-1])  # one at a time, as sessions would
        decisions = [event(env, i)["decision"] for i in ids]
        assert decisions == ["inserted"] + ["superseded"] * 4, decisions
        live_id = event(env, ids[-1])["memory_id"]

        history = cli(env, "history", live_id, "--json")
        versions = history["versions"] if isinstance(history, dict) else history
        assert len(versions) == 5
        assert sorted(v["content"] for v in versions) == sorted(REWORDINGS)
        assert sum(1 for v in versions if v.get("live")) == 1

        # An identical re-send is merged into the same memory: nothing new.
        again = written(env, enqueue(env, REWORDINGS[-1]))
        assert (again["decision"], again["memory_id"]) == ("merged", live_id)

        # A distinct lesson is inserted beside it, and recall finds it.
        other = written(
            env, enqueue(env, "Run database migrations before deploying the API.", "Deploy order")
        )
        assert other["decision"] == "inserted"
        found = cli(env, "recall", "demo", "in what order do we deploy?", "-k", "1", "--json")
        assert found[0]["memory_id"] == other["memory_id"]
        found = cli(env, "recall", "demo", "how should files be named?", "-k", "2", "--json")
        assert found[0]["memory_id"] == live_id
        assert len(found) == 2  # exactly two live memories in the namespace
        assert port_open(flower)
    finally:
        up.send_signal(signal.SIGINT)
        try:
            code = up.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, signal.SIGKILL)
            raise
        log.close()
    text = (tmp_path / "up.log").read_text()
    assert code == 0, text[-3000:]
    assert "memsieve: stopped" in text
    state = services_home / "services.json"
    assert not state.exists()
    time.sleep(0.5)
    assert not port_open(flower)

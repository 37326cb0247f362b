"""The article's scenario, as a new user runs it: `memsieve up` in one terminal (embedded
PostgreSQL + Redis, a worker with the offline MiniLM embedder, Flower), the CLI in another."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from memsieve.ops.services import free_port

from tests.support.cli import cli, enqueue, event, written
from tests.support.up import REWORDINGS, Up, up_env
from tests.support.workers import wait_until

pytestmark = [pytest.mark.local_model, pytest.mark.slow]


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.3)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_five_rewordings_end_as_one_live_memory_with_five_versions(
    tmp_path: Path, services_home: Path
) -> None:
    flower = free_port()
    env = up_env(services_home, MEMSIEVE_FLOWER_PORT=str(flower))
    with Up(env, tmp_path / "up.log") as up:
        assert "embedder   local" in up.log()

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
    text = up.log()
    assert up.code == 0, text[-3000:]
    assert "memsieve: stopped" in text
    state = services_home / "services.json"
    assert not state.exists()
    # Flower was a child of `up`: its port closes once it has exited.
    assert wait_until(lambda: not port_open(flower), timeout=10)

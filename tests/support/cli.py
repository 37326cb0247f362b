"""The `memsieve` command line as a user calls it beside a running service, for tests."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from tests.support.paths import ROOT
from tests.support.workers import wait_until


def run(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`memsieve ARGS` in `env`, from the repository root; its completed process."""
    return subprocess.run(
        [sys.executable, "-m", "memsieve.cli.main", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def cli(env: dict[str, str], *args: str) -> Any:
    """Run `memsieve ARGS` in `env`; its parsed JSON with --json, else its output."""
    out = run(env, *args)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout) if "--json" in args else out.stdout


def enqueue(env: dict[str, str], content: str, heading: str = "File naming") -> str:
    """`memsieve enqueue` one retro in namespace `demo`; its event id."""
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
    """The event's ledger row once it is written (fails after 180 s)."""
    assert wait_until(
        lambda: event(env, event_id).get("status") == "written", timeout=180, interval=0.5
    )
    return event(env, event_id)

"""Shared by bench/headline.py and bench/freshness.py: the real path a user runs.

A fake OpenAI-compatible server (tests/support/openai_server.py) in its own process,
answering after a fixed delay in base64 or in JSON floats; `memsieve worker` with the
defaults `memsieve up` uses (MEMSIEVE_CONCURRENCY, the real `openai` client); events sent
by the real `memsieve enqueue --file` command.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import harness

API_KEY = "sk-test"  # the fake server's key


class FakeServer:
    """tests.support.openai_server in a child process (its CPU is not the worker's)."""

    def __init__(self, delay: float, fmt: str) -> None:
        self.url_file = Path(tempfile.mkstemp(prefix="memsieve-bench-fake-")[1])
        self.url_file.write_text("")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.support.openai_server",
                "--delay",
                str(delay),
                "--format",
                fmt,
                "--url-file",
                str(self.url_file),
            ],
            cwd=harness.ROOT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while not self.url_file.read_text():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("fake OpenAI server did not start")
            time.sleep(0.05)
        self.base_url = self.url_file.read_text()

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.url_file.unlink(missing_ok=True)

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def openai_env(svc: harness.Services, db: str, base_url: str, **extra: str) -> dict[str, str]:
    """The worker's environment: the openai embedder against the fake server, defaults else."""
    env = svc.env(
        db,
        MEMSIEVE_EMBEDDER="openai",
        OPENAI_API_KEY=API_KEY,
        MEMSIEVE_OPENAI_BASE_URL=base_url,
        MEMSIEVE_FLOWER_PORT="0",
    )
    env.pop("MEMSIEVE_HASHING_DIMS", None)
    env.update(extra)
    return env


def enqueue_file(
    env: dict[str, str], events: list[dict[str, Any]], *args: str
) -> subprocess.Popen[bytes]:
    """Start `memsieve enqueue --file` on the events (the CLI a user runs), with extra
    `args` (e.g. --chunk N); returns the process."""
    path = Path(tempfile.mkstemp(prefix="memsieve-bench-events-", suffix=".jsonl")[1])
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    proc = subprocess.Popen(
        [sys.executable, "-m", "memsieve.cli.main", "enqueue", "--file", str(path), *args],
        env=env,
        cwd=harness.ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    proc.args_file = path  # type: ignore[attr-defined]
    return proc


def finish_enqueue(proc: subprocess.Popen[bytes]) -> None:
    _, err = proc.communicate(timeout=600)
    Path(proc.args_file).unlink(missing_ok=True)  # type: ignore[attr-defined]
    if proc.returncode != 0:
        raise RuntimeError(f"memsieve enqueue failed: {err.decode(errors='replace')[-2000:]}")

"""Real `memsieve worker` processes for the acceptance tests, and a bounded wait."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from tests.support.paths import ROOT


class Workers:
    """Real `memsieve worker` subprocesses for a test; all killed at teardown."""

    def __init__(self, env: dict[str, str], logdir: Path) -> None:
        self.env = env
        self.logdir = logdir
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(
        self,
        concurrency: int = 2,
        pool: str = "prefork",
        extra_env: dict[str, str] | None = None,
        drain: float | None = None,
    ) -> subprocess.Popen[bytes]:
        """A worker; with `drain` (seconds), one that exits once the work is done
        (`memsieve worker --drain`): 0 when drained, 3 when work is left after `drain`."""
        n = len(self.procs)
        drain_args = [] if drain is None else ["--drain", f"--drain-timeout={drain}"]
        log = open(self.logdir / f"worker-{n}.log", "ab")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.support.worker",  # `memsieve worker` with tests/support/faults.py
                f"--concurrency={concurrency}",
                f"--pool={pool}",
                f"--hostname=w{n}-{uuid.uuid4().hex[:4]}@%h",
                *drain_args,
            ],
            env={**self.env, **(extra_env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    def wait_drained(self, timeout: float = 300.0) -> list[int]:
        """Wait for every started worker to exit (drain mode); their exit codes."""
        return [p.wait(timeout=timeout) for p in self.procs]

    def logs(self) -> str:
        return "\n".join(
            p.read_text(errors="replace") for p in sorted(self.logdir.glob("worker-*.log"))
        )

    def stop_all(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for p in self.procs:
            p.wait(timeout=10)


def wait_until(cond: Callable[[], bool], timeout: float = 60.0, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(interval)
    return cond()

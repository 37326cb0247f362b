"""`memsieve up`'s children: their environment and command lines, and the supervisor that
restarts one when it exits (with backoff), while the embedded services stay up."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable

from memsieve.settings import Settings


def _child_env(settings: Settings) -> dict[str, str]:
    env = dict(os.environ)
    env["MEMSIEVE_DATABASE_URL"] = settings.database_url or ""
    env["MEMSIEVE_REDIS_URL"] = settings.redis_url or ""
    env["MEMSIEVE_BROKER_URL"] = settings.broker_url or ""
    env["MEMSIEVE_EMBEDDER"] = settings.embedder
    env["MEMSIEVE_HOME"] = str(settings.home)
    return env


def flower_command(
    settings: Settings, base_env: dict[str, str]
) -> tuple[list[str], dict[str, str]]:
    """Flower through memsieve's launcher: (command line, environment).

    The command line holds no option: the broker URL and the basic-auth credentials go
    in the environment, which only the owner can read (/proc/PID/environ is 0400).
    """
    from memsieve.ops import flower

    return flower.command(), flower.environment(settings, base_env)


class Supervised:
    """A child of `memsieve up` that is restarted when it exits, with backoff (1 s, doubling
    up to 60 s; back to 1 s once it has run for 5 minutes). The embedded services stay up
    meanwhile: accepted events wait in the inbox, new messages wait on the queue."""

    MAX_DELAY = 60.0
    HEALTHY_AFTER = 300.0

    def __init__(
        self,
        name: str,
        spawn: Callable[[], subprocess.Popen[bytes]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.spawn = spawn
        self.clock = clock
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.delay = 1.0
        self.restart_at: float | None = None
        self.restarts = 0

    def start(self) -> None:
        self.proc = self.spawn()
        self.started_at = self.clock()
        self.restart_at = None

    def tick(self) -> None:
        now = self.clock()
        if self.restart_at is not None:
            if now >= self.restart_at:
                self.restarts += 1
                self.start()
            return
        if self.proc is None or self.proc.poll() is None:
            return
        if now - self.started_at >= self.HEALTHY_AFTER:
            self.delay = 1.0
        print(
            f"memsieve: {self.name} exited with code {self.proc.returncode}; "
            f"restarting in {self.delay:.0f} s",
            file=sys.stderr,
            flush=True,
        )
        self.restart_at = now + self.delay
        self.delay = min(self.delay * 2, self.MAX_DELAY)

"""`memsieve up` as a user runs it, for acceptance tests: one process tree in its own
session, its output in a log file, stopped with Ctrl-C (SIGINT) at the end; and the CLI
a user would call beside it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from types import TracebackType

from memsieve.ops.services import free_port

from tests.support.paths import ROOT
from tests.support.workers import wait_until

# The article's scenario: five rewordings of one lesson, sent one at a time.
REWORDINGS = [
    "This project uses kebab-case for filenames.",
    "Filenames in this project are kebab-case.",
    "Use kebab-case when naming files in this project.",
    "In this repo, files are named in kebab-case.",
    "Name files with kebab-case in this project.",
]


def up_env(home: Path, **settings: str) -> dict[str, str]:
    """This process's environment without any MEMSIEVE_* or OpenAI key (a user's shell),
    plus `home`, a free metrics port, one worker process and the given settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MEMSIEVE_") and k != "OPENAI_API_KEY"
    }
    env.update(
        MEMSIEVE_HOME=str(home),
        MEMSIEVE_METRICS_PORT=str(free_port()),
        MEMSIEVE_CONCURRENCY="1",
        PYTHONUNBUFFERED="1",
    )
    env.update(settings)
    return env


class Up:
    """`with Up(env, log_path) as up:` starts `memsieve up` and waits until it says it is
    up; leaving the block sends SIGINT and waits for the exit (`up.code`), killing the
    process group if it does not stop within 90 s."""

    def __init__(self, env: dict[str, str], log_path: Path, ready_timeout: float = 120) -> None:
        self.env = env
        self.log_path = log_path
        self.ready_timeout = ready_timeout
        self.code: int | None = None

    def __enter__(self) -> Up:
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memsieve.cli.main", "up"],
            env=self.env,
            cwd=ROOT,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            assert wait_until(lambda: "memsieve is up" in self.log(), timeout=self.ready_timeout), (
                self.log()[-3000:]
            )
        except BaseException:
            self.stop()
            raise
        return self

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.code = self.proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            raise
        finally:
            self._log.close()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

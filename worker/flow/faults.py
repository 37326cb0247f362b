"""Fault injection for the acceptance tests: pauses and poison inputs at named points.

Test-only. Every hook is a no-op unless its environment variable is set, and the
variables are deliberately not in `SETTINGS_HELP`: no production setting needs them.

- `MEMSIEVE_FAULT_DELAY_EMBED=<seconds>`: sleep inside the embed step of each flush round,
  after the batch is claimed and before any vector exists (a kill here is "mid-embed").
- `MEMSIEVE_FAULT_DELAY_WRITE=<seconds>`: sleep inside the write transaction, after
  `pg_advisory_xact_lock` is held and before the gate runs (a kill here is
  "mid-transaction"; a SIGSTOP here leaves the advisory lock held).
- `MEMSIEVE_FAULT_CRASH=<marker>`: the hashing embedder kills its own process (SIGKILL)
  on any batch holding a text that contains the marker (an input that crashes the worker).
- `MEMSIEVE_FAULT_POISON=<marker>`: the hashing embedder fails with a transient error on
  any batch holding a text that contains the marker, every time (a poison event: retrying
  never helps).

Each hook logs one WARNING line starting with "fault injection:" so that a test can wait
for a worker to reach the point before it kills or stops it.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Sequence

from memsieve import errors

log = logging.getLogger("memsieve.faults")

DELAY_EMBED = "MEMSIEVE_FAULT_DELAY_EMBED"
DELAY_WRITE = "MEMSIEVE_FAULT_DELAY_WRITE"
POISON = "MEMSIEVE_FAULT_POISON"
CRASH = "MEMSIEVE_FAULT_CRASH"


def pause(stage: str, namespace: str, events: int) -> None:
    """Sleep at `stage` ("embed" or "write") if the matching variable asks for it."""
    var = DELAY_EMBED if stage == "embed" else DELAY_WRITE
    seconds = float(os.environ.get(var) or 0)
    if seconds > 0:
        log.warning(
            "fault injection: pausing %.2fs in %s (namespace %s, %d events, pid %d)",
            seconds,
            stage,
            namespace,
            events,
            os.getpid(),
        )
        time.sleep(seconds)


def check_poison(texts: Sequence[str]) -> None:
    """Raise a transient error if any text carries the poison marker."""
    marker = os.environ.get(POISON)
    if marker and any(marker in t for t in texts):
        log.warning(
            "fault injection: poison input in a batch of %d (pid %d)", len(texts), os.getpid()
        )
        raise errors.TransientError("fault injection: embedder always times out on this input")


def check_crash(texts: Sequence[str]) -> None:
    """SIGKILL this process if any text carries the crash marker."""
    marker = os.environ.get(CRASH)
    if marker and any(marker in t for t in texts):
        log.warning("fault injection: crashing on a batch of %d (pid %d)", len(texts), os.getpid())
        os.kill(os.getpid(), signal.SIGKILL)

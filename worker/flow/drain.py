"""Drain mode (`memsieve worker --drain`): process what is queued, then exit.

As arq's burst mode: the worker consumes as usual and a watcher thread in its main
process stops it once the work is done; "done" is, for several checks in a row,

- no task received by this worker and not finished (countdown retries included: Celery
  holds them as reserved requests);
- no message waiting on the worker's queues at the broker;
- no pending event in the store (a capture's events are pending until a flush writes
  them; one that nobody scheduled is found by the sweeper).

Then it asks for a warm shutdown and the command exits 0. If that state is not reached
within the timeout, it stops the worker (cold) and the command exits non-zero: the tests
and scripts that use it wait on the process, not on logs.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger("memsieve.drain")

EXIT_TIMEOUT = 3


def queued(app: Any, queues: Sequence[str]) -> int:
    """Messages waiting at the broker on `queues` (a queue that does not exist holds none)."""
    total = 0
    with app.connection_for_read() as conn:
        for name in queues:
            channel = conn.channel()
            try:
                total += channel.queue_declare(queue=name, passive=True).message_count
            except Exception:  # noqa: BLE001 - kombu: NOT_FOUND for a queue never declared
                total += 0
            finally:
                try:
                    channel.close()
                except Exception:  # noqa: BLE001 - a channel closed by the broker's refusal
                    pass
    return total


def busy_requests() -> int:
    """Tasks this worker has received and not finished (active, prefetched or waiting on
    a countdown)."""
    from celery.worker import state

    return len(state.active_requests) + len(state.reserved_requests)


class Drain:
    """Watches a running worker; `result` is 0 once drained, EXIT_TIMEOUT after `timeout`."""

    def __init__(
        self,
        checks: Sequence[Callable[[], int]],
        timeout: float,
        interval: float = 0.2,
        settle: int = 3,
        stop: Callable[[bool], None] | None = None,
    ) -> None:
        self.checks = checks
        self.timeout = timeout
        self.interval = interval
        self.settle = settle
        self.stop = stop or _signal_stop
        self.result: int | None = None
        self._thread: threading.Thread | None = None

    def idle(self) -> bool:
        return all(check() == 0 for check in self.checks)

    def run(self) -> None:
        deadline = time.monotonic() + self.timeout
        quiet = 0
        while time.monotonic() < deadline:
            try:
                quiet = quiet + 1 if self.idle() else 0
            except Exception as exc:  # noqa: BLE001 - a broker/store blip: look again
                log.warning("drain: check failed (%s); retrying", type(exc).__name__)
                quiet = 0
            if quiet >= self.settle:
                log.info("drain: queue and store are empty; stopping")
                self.result = 0
                self.stop(True)
                return
            time.sleep(self.interval)
        log.error("drain: work left after %.0fs; stopping", self.timeout)
        self.result = EXIT_TIMEOUT
        self.stop(False)

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="memsieve-drain", daemon=True)
        self._thread.start()


def _signal_stop(drained: bool) -> None:
    # SIGTERM: Celery's warm shutdown (finish running tasks). SIGQUIT: cold shutdown, for a
    # worker stuck past its timeout.
    os.kill(os.getpid(), signal.SIGTERM if drained else signal.SIGQUIT)


def for_worker(app: Any, store: Any, queues: Sequence[str], timeout: float) -> Drain:
    """A drain of the worker running `app`, started when the worker is ready."""
    from celery import signals

    drain = Drain(
        [busy_requests, lambda: queued(app, queues), lambda: len(store.pending_namespaces())],
        timeout,
    )

    def _ready(**_: object) -> None:
        drain.start()

    signals.worker_ready.connect(_ready, weak=False)
    return drain

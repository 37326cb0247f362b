"""One Pipeline per worker process, built lazily (after fork) from the app's settings."""

from __future__ import annotations

import logging
import os
import random

from celery import signals
from memsieve.app import current_settings
from memsieve.delivery import broker
from memsieve.flow.pipeline import Pipeline

_pipeline: Pipeline | None = None
_pid: int | None = None


def pipeline() -> Pipeline:
    global _pipeline, _pid
    if _pipeline is None or _pid != os.getpid():
        _pipeline = Pipeline(current_settings())
        _pid = os.getpid()
    return _pipeline


# Garbage popped off a Redis queue is recorded in this process's store.
broker.set_recorder(lambda events: pipeline().store.insert_events(events))


def backoff(retries: int, base: float = 0.5, cap: float = 30.0) -> float:
    """Exponential backoff with full jitter, in seconds.

    Capped at a third of the visibility timeout: the Redis broker would redeliver a
    message whose countdown outlasts it, and the task would run twice.
    """
    cap = min(cap, current_settings().visibility_timeout / 3)
    return random.uniform(0, min(cap, base * 2**retries))


@signals.worker_process_init.connect
def _warm_up(**_: object) -> None:
    """Build the pipeline and load the embedding model in each new worker process, so the
    first event does not wait for it (MiniLM takes seconds to load)."""
    try:
        warm = getattr(pipeline().embedder, "warm_up", None)
        if warm is not None:
            warm()
    except Exception as exc:  # noqa: BLE001 - the first task will report it properly
        logging.getLogger("memsieve.tasks").warning("warm-up failed: %s", exc)

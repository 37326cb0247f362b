"""One Pipeline per worker process, built lazily (after fork) from the app's settings."""

from __future__ import annotations

import logging
import os
import random
import time

import redis
from celery import signals
from memsieve import constants
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


_broker: redis.Redis | None = None
_broker_pid: int | None = None
# Until when (time.monotonic) this process treats its queues as unseen, after the broker
# refused to count them (`work_waiting`).
_blind_until = 0.0
BLIND_S = 60.0
log = logging.getLogger(__name__)


def sees_queues() -> bool:
    """Whether `work_waiting` can see the broker's queues (a Redis broker, and
    MEMSIEVE_YIELD_TO_LIVE on, and it has not refused to count them in the last minute);
    elsewhere it always answers False."""
    settings = current_settings()
    url = settings.broker_url or ""
    redis_broker = url.startswith(("redis://", "rediss://", "unix://"))
    return settings.yield_to_live and redis_broker and time.monotonic() >= _blind_until


# How long a worker that found its namespace busy embeds ahead before it re-queues itself,
# in flush slices. Where it can see the queues it stops as soon as a message waits on one
# it serves, so the budget is only a bound: a short one left a core idle for the second
# between the helper's re-queue and its retry (1,000 events in one namespace, six
# interleaved pairs: 63 -> 67.5 % of the runtime's two-thread rate). Where it cannot (AMQP),
# the budget is what bounds a live capture's wait behind it.
HELPER_SLICES_SEEN = 10
HELPER_SLICES_BLIND = 2


def helper_budget(stops_on_work: bool) -> float:
    """Seconds of embedding ahead for a helper; `stops_on_work`: it asks `work_waiting`.
    At most a third of the visibility timeout, as for countdowns (`backoff`): the Redis
    broker would deliver a message whose task runs past it a second time."""
    settings = current_settings()
    seen = stops_on_work and sees_queues()
    slices = HELPER_SLICES_SEEN if seen else HELPER_SLICES_BLIND
    return min(slices * settings.flush_slice_ms / 1000, settings.visibility_timeout / 3)


def work_waiting(queues: tuple[str, ...]) -> bool:
    """Whether messages wait on any of these broker queues (Redis only: LLEN each).

    A flush delivered on a lower lane asks between batches and stops when it is so: the
    process is back at the higher lanes after one batch, not after a whole slice. On AMQP
    this answers False (the lanes are separate queues, consumed round-robin)."""
    global _broker, _broker_pid, _blind_until
    if not sees_queues():
        return False
    url = current_settings().broker_url or ""
    if _broker is None or _broker_pid != os.getpid():
        _broker = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        _broker_pid = os.getpid()
    try:
        pipe = _broker.pipeline(transaction=False)
        for q in queues:
            pipe.llen(q)
        return any(pipe.execute())
    except redis.RedisError as exc:
        # A broker that refuses LLEN (an ACL, a proxy) or cannot answer: the caller stops
        # as if work waited, and for a minute this process is blind as on AMQP
        # (`helper_budget` gives the short budget, and this answers False without asking).
        # Answering False here instead would let a helper embed blind for the long budget.
        _blind_until = time.monotonic() + BLIND_S
        log.warning("cannot see the broker's queues for %.0f s: %s", BLIND_S, exc)
        return True


def higher_lanes(queue: str | None) -> tuple[str, ...]:
    """The lanes polled before `queue` (constants.QUEUES is the order)."""
    if queue not in constants.QUEUES:
        return ()
    return constants.QUEUES[: constants.QUEUES.index(queue)]


# Garbage popped off a Redis queue is recorded in this process's store.
broker.set_recorder(lambda events: pipeline().store.insert_events(events))


def backoff(retries: int, base: float = 0.5, cap: float = 30.0) -> float:
    """Exponential backoff with full jitter, in seconds.

    Capped at a third of the visibility timeout: the Redis broker would redeliver a
    message whose countdown outlasts it, and the task would run twice.
    """
    cap = min(cap, current_settings().visibility_timeout / 3)
    return random.uniform(0, min(cap, base * 2**retries))


def one_blas_thread() -> None:
    """One BLAS thread in this process. The gate's products are small (a batch against a
    namespace, word vectors against word vectors) and each worker process already has a
    core of its own: with OpenBLAS's default (a thread per core, spinning while it waits),
    a 41x384 by 384x30 product took 5-24 ms instead of 16 us on this 2-core machine while
    the other core was busy (docs/performance.md)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


@signals.worker_process_init.connect
def _warm_up(**_: object) -> None:
    """Build the pipeline and load the embedding model and the judge's model in each new
    worker process, so the first event does not wait for them (MiniLM takes seconds to
    load; behind the OpenAI embedder the classifier judge loads it for its token vectors)."""
    one_blas_thread()
    warm_up(pipeline())


def warm_up(pipe: Pipeline) -> None:
    """Warm the pipeline's embedder and judge (each one's `warm_up`, where it has one)."""
    started = time.monotonic()
    for part in ("embedder", "judge"):
        try:
            warm = getattr(getattr(pipe, part), "warm_up", None)
            if warm is not None:
                warm()
        except Exception as exc:  # noqa: BLE001 - the first task will report it properly
            logging.getLogger("memsieve.tasks").warning("%s warm-up failed: %s", part, exc)
    # Celery says "ready." before its pool processes are through this: the line tells an
    # operator (and the benchmarks) when a process can take work at full speed.
    logging.getLogger("memsieve.tasks").info(
        "worker process %d warmed up in %.1f s", os.getpid(), time.monotonic() - started
    )

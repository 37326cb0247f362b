"""memsieve.flush: drain one namespace's pending events through the gate."""

from __future__ import annotations

import logging
from typing import Any

import redis
from memsieve import constants, errors
from memsieve.app import app
from memsieve.flow import runtime
from memsieve.tasks.capture import flush_later, scheduled_key

log = logging.getLogger("memsieve.tasks.flush")


def delivered_on(request: Any) -> str | None:
    """The queue this message came from (None when unknown, e.g. called directly)."""
    info = getattr(request, "delivery_info", None) or {}
    key = info.get("routing_key") if isinstance(info, dict) else None
    return key if isinstance(key, str) else None


def again_lane(lane: Any) -> str:
    """Where the rest of a flush woken from `lane` goes: a live flush's on the flush lane,
    ahead of any backlog; a backfill's (or a sweep's) behind the backfill."""
    return constants.QUEUE_FLUSH if lane == constants.QUEUE else constants.QUEUE_BACKFILL


def wake_helper(pipe: Any, namespace: str, queue: str) -> None:
    """More than a batch of `namespace` waits: queue a flush that another worker will find
    busy, so it embeds ahead while this one drains (memsieve.flow.ahead). One wake-up per
    namespace every few seconds; the helper's busy retries keep it helping after that."""
    if not pipe.settings.embed_ahead:
        return
    if not pipe.redis.set(constants.embed_ahead_wake_key(namespace), "1", nx=True, ex=5):
        return
    if pipe.store.pending_at_least(namespace, pipe.settings.batch_size + 1):
        flush_later(namespace, queue=queue)


@app.task(
    name=constants.TASK_FLUSH,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=50,
)
def flush(self: Any, namespace: Any, lane: Any = constants.QUEUE) -> dict[str, Any]:
    """`lane`: the marker this flush clears (constants.QUEUE: woken by a live capture,
    QUEUE_BACKFILL: by a backfill capture, None: a retry, leftover or sweep)."""
    if not isinstance(namespace, str):
        return {"error": "namespace must be a string"}
    pipe = runtime.pipeline()
    try:
        # Before claiming anything: a capture from now on schedules a new flush, and one
        # that skipped scheduling (it saw the marker) inserted its events before, so this
        # flush claims them.
        if lane in (constants.QUEUE, constants.QUEUE_BACKFILL):
            pipe.redis.delete(scheduled_key(namespace, lane))
        # One slice of work, then the rest goes back on the flush lane: a process never
        # stays away from the live queue for more than about a slice.
        # A flush delivered on a lower lane also stops after the batch in hand when work
        # waits on a higher one (a live capture, a live flush's re-check or leftovers).
        queue_in = delivered_on(self.request)
        higher = runtime.higher_lanes(queue_in)
        wake_helper(pipe, namespace, again_lane(lane))
        result = pipe.flush(
            namespace,
            budget=pipe.settings.flush_slice_ms / 1000,
            yield_to=(lambda: runtime.work_waiting(higher)) if higher else None,
        )
    except errors.EmbedderMismatch:
        raise
    except (errors.TransientError, redis.RedisError) as exc:
        # The store raises its database errors as transient (an outage, a lost race) or
        # permanent (memsieve.store.dberrors); only the first kind is worth a retry.
        log.warning(
            "flush %s: %s: %s; retry %d",
            namespace,
            type(exc).__name__,
            exc,
            self.request.retries + 1,
        )
        raise self.retry(exc=exc, countdown=runtime.backoff(self.request.retries)) from None
    if result.busy:
        # Another worker is draining this namespace: embed its next batches meanwhile (both
        # cores work when one namespace dominates), only while no work waits for this
        # process on its own lane or a higher one, and for a bounded time
        # (runtime.helper_budget: 10 slices where it sees that work, else 2).
        served = (*higher, queue_in) if queue_in else ()
        waiting = (lambda: runtime.work_waiting(served)) if served else None
        if pipe.settings.embed_ahead and not (waiting is not None and waiting()):
            pipe.embed_ahead(
                namespace, budget=runtime.helper_budget(waiting is not None), stop=waiting
            )
        # One short retry per namespace at a time covers the lost wake-up; the holder also
        # re-checks after releasing.
        if pipe.redis.set(constants.flush_retry_key(namespace), "1", nx=True, ex=2):
            raise self.retry(countdown=1.0)
        return {"namespace": namespace, "busy": True}
    if result.lock_lost:
        log.warning(
            "flush %s: the namespace lock expired under this worker (paused past its TTL?);"
            " stopped draining, another worker owns the namespace now",
            namespace,
        )
    # Leftovers of a live flush go ahead of any backlog; those of a backfill's flush (or a
    # sweep) go behind it, where the backfill's other flushes wait too.
    again = again_lane(lane)
    if result.more:
        # The slice ran out with events still pending: the rest, after live work.
        flush_later(namespace, queue=again)
    elif result.failed:
        # Events that failed again stay pending: try them later, with backoff (the
        # sweeper would find them too). Each failure used up one of their attempts.
        flush_later(namespace, countdown=runtime.backoff(3), queue=again)
    elif pipe.store.has_pending(namespace):
        # Lost wake-up: events that arrived while we held the lock and whose own flush
        # was refused (it retries in a second) are picked up here; a live namespace's on
        # the live queue, where they came from.
        flush_later(namespace, queue=constants.QUEUE if lane == constants.QUEUE else again)
    counts: dict[str, Any] = {"namespace": namespace}
    for o in result.outcomes:
        counts[o.decision] = counts.get(o.decision, 0) + 1
    if result.dead:
        counts["dead"] = len(result.dead)
    return counts

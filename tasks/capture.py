"""memsieve.capture: validate, filter and persist events, then wake their namespaces."""

from __future__ import annotations

import logging
import math
from typing import Any

import kombu.exceptions
import psycopg
import redis
from memsieve import constants, errors
from memsieve.app import app
from memsieve.flow import runtime

log = logging.getLogger("memsieve.tasks.capture")

# None: retry for as long as the store is unreachable. The message is the only copy of
# events the producer was told were accepted; giving up would lose them. Only an
# unreachable store is retried here (bad input never raises), so this cannot loop on a
# poison message.
MAX_RETRIES = None


@app.task(
    name=constants.TASK_CAPTURE,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=MAX_RETRIES,
    Request="memsieve.delivery.consumer:CaptureRequest",
)
def capture(self: Any, payload: Any) -> dict[str, int]:
    """Accept one event or a list of events (backfills send lists).

    Bad input never raises: each item ends in the ledger as pending or rejected with a
    reason. Only an unreachable store is retried (with backoff); inbox writes are
    idempotent, so a retry or a redelivery changes nothing.
    """
    items = payload if isinstance(payload, list) else [payload]
    pipe = runtime.pipeline()
    try:
        accepted = pipe.accept(items)
    except (psycopg.OperationalError, psycopg.errors.AdminShutdown, errors.TransientError) as exc:
        log.warning(
            "capture: store unavailable (%s); retry %d",
            type(exc).__name__,
            self.request.retries + 1,
        )
        raise self.retry(exc=exc, countdown=runtime.backoff(self.request.retries)) from None
    touched = sorted({a.namespace for a in accepted if a.status == "pending" and a.namespace})
    lane = lane_of(self.request)
    for ns in touched:
        wake(pipe.redis, ns, lane, pipe.settings.backfill_flush_every_ms / 1000)
    counts = {"pending": 0, "rejected": 0, "duplicate": 0}
    for a in accepted:
        counts[a.status] = counts.get(a.status, 0) + 1
    return counts


# A flush of the namespace is queued and has not started draining yet. Captures that find
# it skip scheduling their own: that flush deletes the marker *before* it claims, so it
# claims their events (inserted before they looked). A capture after the delete sets a new
# marker and schedules a new flush. The TTL only bounds how long a lost flush message can
# mute the wake-ups of a namespace (the sweeper re-flushes pending events anyway).
SCHEDULED_TTL_S = 1


def scheduled_key(namespace: str, lane: str = constants.QUEUE) -> str:
    return constants.flush_scheduled_key(namespace, lane)


def lane_of(request: Any) -> str:
    """The lane a capture message came on: backfill captures wake backfill flushes."""
    info = getattr(request, "delivery_info", None) or {}
    key = info.get("routing_key") if isinstance(info, dict) else None
    return constants.QUEUE_BACKFILL if key == constants.QUEUE_BACKFILL else constants.QUEUE


def wake(
    client: redis.Redis, namespace: str, lane: str = constants.QUEUE, every: float = 0.0
) -> None:
    """Schedule a flush of `namespace` unless one is queued on its lane and not yet draining.

    Live captures wake a flush on the live queue, at once. Backfill captures wake one on
    the flush lane (above backfill captures, below live work): the first at once, so a
    backfill's first memories show within a second, later ones `every` seconds apart, so
    each drains a full batch instead of a handful of events per embedding request.
    """
    flush_lane = constants.QUEUE if lane == constants.QUEUE else constants.QUEUE_FLUSH
    marker = scheduled_key(namespace, flush_lane)
    countdown = 0.0
    # The marker outlives a delayed flush, or every capture meanwhile would queue one.
    ttl = SCHEDULED_TTL_S if flush_lane == constants.QUEUE else SCHEDULED_TTL_S + math.ceil(every)
    try:
        if not client.set(marker, "1", nx=True, ex=ttl):
            return
        if flush_lane == constants.QUEUE_FLUSH and every > 0:
            key = constants.backfill_flushed_key(namespace)
            if not client.set(key, "1", nx=True, px=int(every * 1000)):
                countdown = max(0.0, client.pttl(key) / 1000)
    except redis.RedisError as exc:
        log.warning("flush marker of %s: %s; scheduling anyway", namespace, exc)
    if not flush_later(namespace, countdown=countdown, queue=flush_lane):
        # Nothing was queued to clear the marker: let the next capture schedule.
        try:
            client.delete(marker)
        except redis.RedisError:
            pass  # it expires within SCHEDULED_TTL_S


def flush_later(namespace: str, countdown: float = 0.0, queue: str = constants.QUEUE_FLUSH) -> bool:
    """Queue a flush of `namespace`; False if the broker refused (the sweeper will find it).

    Retries, leftovers and sweeps go on the flush lane; live captures pass their own queue.
    """
    try:
        app.send_task(
            constants.TASK_FLUSH,
            args=[namespace],
            kwargs={"lane": queue},
            queue=queue,
            countdown=countdown or None,
        )
    except (redis.RedisError, OSError, kombu.exceptions.OperationalError) as exc:
        # The sweeper will find the pending events; nothing is lost.
        log.warning("could not schedule flush of %s: %s", namespace, exc)
        return False
    return True

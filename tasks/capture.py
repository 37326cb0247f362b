"""memsieve.capture: validate, filter and persist events, then wake their namespaces."""

from __future__ import annotations

import logging
from typing import Any

import kombu.exceptions
import psycopg
import redis
from memsieve import constants, errors
from memsieve.app import app
from memsieve.delivery import stamp
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
    # A trusted producer's scan stamps (memsieve.delivery.stamp): each one that verifies
    # spares its event a second secret scan; any other is ignored and the event scanned.
    stamps = stamp.header_value(getattr(self.request, stamp.HEADER, None), len(items))
    pipe = runtime.pipeline()
    try:
        accepted = pipe.accept(items, stamps)
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
    # How many were not scanned a second time (a verified stamp): shown in the worker log
    # and Flower beside the counts, so an operator sees whether producers stamp.
    counts["stamped"] = sum(1 for a in accepted if a.stamped)
    return counts


# A flush of the namespace is queued and has not started draining yet. Captures that find
# it skip scheduling their own: that flush deletes the marker *before* it claims, so it
# claims their events (inserted before they looked). A capture after the delete sets a new
# marker and schedules a new flush. The TTL only bounds how long a lost flush message can
# mute the wake-ups of a namespace (the sweeper re-flushes pending events anyway).
SCHEDULED_TTL_S = 1
# A backfill's flush waits behind its captures; the sweeper still bounds a lost one.
BACKFILL_TTL_S = 120


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
    """Schedule a flush of `namespace` unless one woken from its lane is queued and not
    yet draining.

    Live captures wake a flush on the live queue: it runs before any backfill work.
    Backfill captures wake one ahead of the backlog (the flush lane) at most once per
    `every` seconds per namespace, so a backfill's first memories show at once; the
    others queue behind the backfill's own captures (the backfill lane), so they drain
    full batches instead of a handful of events per embedding request.
    """
    live = lane == constants.QUEUE
    marker = scheduled_key(namespace, constants.QUEUE if live else constants.QUEUE_BACKFILL)
    queue = constants.QUEUE if live else constants.QUEUE_BACKFILL
    try:
        # A backfill flush can wait behind many captures: its marker must outlive that
        # wait, or every capture meanwhile would queue another flush of the namespace.
        if not client.set(marker, "1", nx=True, ex=SCHEDULED_TTL_S if live else BACKFILL_TTL_S):
            return
        if not live and (
            every <= 0
            or client.set(
                constants.backfill_flushed_key(namespace), "1", nx=True, px=int(every * 1000)
            )
        ):
            queue = constants.QUEUE_FLUSH
    except redis.RedisError as exc:
        log.warning("flush marker of %s: %s; scheduling anyway", namespace, exc)
    if not flush_later(namespace, queue=queue, marker_lane=constants.QUEUE if live else lane):
        # Nothing was queued to clear the marker: let the next capture schedule.
        try:
            client.delete(marker)
        except redis.RedisError:
            pass  # it expires within its TTL


def flush_later(
    namespace: str,
    countdown: float = 0.0,
    queue: str = constants.QUEUE_FLUSH,
    marker_lane: str | None = None,
) -> bool:
    """Queue a flush of `namespace` on `queue`; False if the broker refused (the sweeper
    will find it). `marker_lane` names the scheduled-flush marker the flush clears
    (constants.QUEUE: live, QUEUE_BACKFILL: backfill; None: none). Retries and leftovers
    go on the flush lane."""
    try:
        app.send_task(
            constants.TASK_FLUSH,
            args=[namespace],
            kwargs={"lane": marker_lane},
            queue=queue,
            countdown=countdown or None,
        )
    except (redis.RedisError, OSError, kombu.exceptions.OperationalError) as exc:
        # The sweeper will find the pending events; nothing is lost.
        log.warning("could not schedule flush of %s: %s", namespace, exc)
        return False
    return True

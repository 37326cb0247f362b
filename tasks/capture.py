"""memsieve.capture: validate, filter and persist events, then wake their namespaces."""

from __future__ import annotations

import logging
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
    for ns in touched:
        wake(pipe.redis, ns)
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


def scheduled_key(namespace: str) -> str:
    return constants.flush_scheduled_key(namespace)


def wake(client: redis.Redis, namespace: str) -> None:
    """Schedule a flush of `namespace` unless one is queued and not yet draining."""
    try:
        if not client.set(scheduled_key(namespace), "1", nx=True, ex=SCHEDULED_TTL_S):
            return
    except redis.RedisError as exc:
        log.warning("flush marker of %s: %s; scheduling anyway", namespace, exc)
    if not flush_later(namespace):
        # Nothing was queued to clear the marker: let the next capture schedule.
        try:
            client.delete(scheduled_key(namespace))
        except redis.RedisError:
            pass  # it expires within SCHEDULED_TTL_S


def flush_later(namespace: str, countdown: float = 0.0) -> bool:
    """Queue a flush of `namespace`; False if the broker refused (the sweeper will find it)."""
    try:
        app.send_task(
            constants.TASK_FLUSH,
            args=[namespace],
            queue=constants.QUEUE,
            countdown=countdown or None,
        )
    except (redis.RedisError, OSError, kombu.exceptions.OperationalError) as exc:
        # The sweeper will find the pending events; nothing is lost.
        log.warning("could not schedule flush of %s: %s", namespace, exc)
        return False
    return True

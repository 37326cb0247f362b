"""The Celery app and its settings.

Delivery is at-least-once (late acks, one message prefetched per process); every task is
idempotent, so a redelivered message changes nothing.
"""

from __future__ import annotations

import logging
import threading

from celery import Celery, signals
from memsieve import constants
from memsieve.delivery import broker
from memsieve.settings import Settings

log = logging.getLogger("memsieve.app")

# Garbage pushed onto a Redis queue must not kill the worker (see worker/delivery/broker.py).
broker.install()
app = Celery("memsieve", include=["memsieve.tasks.capture", "memsieve.tasks.flush"])


def configure(settings: Settings) -> Celery:
    """Point the app at the resolved broker and apply memsieve's delivery settings."""
    app.conf.update(
        broker_url=settings.broker_url,
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,
        # Redis broker: an unacked message (its worker was killed) comes back after the
        # visibility timeout; keep countdowns far below it (memsieve.flow.runtime.backoff). Kombu
        # only scans for such messages every interval * throttle seconds (100 s by
        # default): scan every tenth of the timeout instead, so a lost worker's messages
        # return within ~1.1x the timeout. Ignored by the AMQP transport, where the
        # broker requeues a dead consumer's unacked messages at once.
        broker_transport_options={
            # Redis: poll the lanes in the order of constants.QUEUES every time (BRPOP
            # takes the first non-empty list), not round-robin: a live capture is taken
            # before any queued backfill work. AMQP ignores it (see docs/performance.md).
            "queue_order_strategy": "priority",
            "visibility_timeout": settings.visibility_timeout,
            "unacked_restore_interval": max(1, settings.visibility_timeout // 10),
            "unacked_restore_throttle": 1,
        },
        result_backend=None,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        task_default_queue=constants.QUEUE,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        # Redis: take a message only when a process is free. Without it, each countdown
        # (a busy flush's retry) raises the prefetch by one, and the extra message taken
        # (backfill work, when the higher lanes were empty) then runs before a live
        # capture that arrives meanwhile. Celery ignores it with a warning on AMQP.
        worker_disable_prefetch=(settings.broker_url or "").startswith(("redis", "rediss")),
        worker_cancel_long_running_tasks_on_connection_loss=True,
        # A new pool process loads MiniLM before it takes work (flow/runtime: the local
        # embedder, or the classifier judge behind any embedder): 1-2.3 s here, more on a
        # loaded machine. Celery kills a process that is not up within 4 s by default.
        worker_proc_alive_timeout=60.0,
        worker_send_task_events=True,
        # Off: a retry re-sends the task from the worker, and the task-sent event would
        # carry Celery's repr of the arguments (lesson text). Received/started/succeeded
        # events carry CaptureRequest's summary instead.
        task_send_sent_event=False,
        worker_consumer="memsieve.delivery.consumer:MemsieveConsumer",
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
        task_track_started=True,
    )
    # Kept beside the app, not in app.conf: Celery's `conf` remote command (Flower's
    # worker Config tab) prints app.conf, and Settings holds URLs with passwords.
    global _settings
    _settings = settings
    return app


_settings: Settings | None = None


def current_settings() -> Settings:
    settings = _settings
    if settings is None:
        settings = Settings.from_env().resolved()
        configure(settings)
    return settings


_sweeper_stop = threading.Event()


def _sweep_loop(settings: Settings) -> None:
    """Find namespaces whose events wait longer than the sweep interval and flush them.

    Safety net for lost wake-ups and for flushes lost with a broker restart; one worker
    sweeps at a time (a Redis key elects it for one interval).
    """
    import redis
    from memsieve.ops import scrub
    from memsieve.store.postgres import Store

    client = redis.Redis.from_url(settings.redis_url or "", socket_timeout=5)
    store = Store(settings.database_url or "", max_size=1)
    scrubber = scrub.for_settings(client, settings.broker_url)
    interval = settings.sweep_interval
    while not _sweeper_stop.wait(interval):
        try:
            if not client.set(constants.SWEEP_LEADER_KEY, "1", nx=True, ex=interval):
                continue
            for ns in store.pending_namespaces(older_than_s=interval):
                app.send_task(
                    constants.TASK_FLUSH,
                    args=[ns],
                    # Behind any backlog: a safety net, not a fast path.
                    kwargs={"lane": None},
                    queue=constants.QUEUE_BACKFILL,
                )
                log.info("sweep: flushing namespace %s (pending events waited > %ss)", ns, interval)
            scrubber.tick()
        except Exception as exc:  # noqa: BLE001 - the sweeper must outlive outages
            log.warning("sweep failed, will retry: %s", exc)


@signals.worker_ready.connect
def _start_sweeper(**_: object) -> None:
    settings = current_settings()
    _sweeper_stop.clear()
    threading.Thread(
        target=_sweep_loop, args=(settings,), name="memsieve-sweeper", daemon=True
    ).start()


@signals.worker_shutting_down.connect
def _stop_sweeper(**_: object) -> None:
    _sweeper_stop.set()

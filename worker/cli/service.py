"""`memsieve up | worker | migrate | down`: running the service."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from memsieve import errors
from memsieve.cli.common import fail, resolve
from memsieve.cli.supervise import Supervised, _child_env, flower_command
from memsieve.ops.procs import read_pid
from memsieve.ops.services import EmbeddedServices
from memsieve.settings import Settings, redact_url
from memsieve.store import dberrors
from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_exponential_jitter

log = logging.getLogger("memsieve.worker")

__all__ = ["Supervised", "_child_env", "flower_command"]


def cmd_up(settings: Settings, args: argparse.Namespace) -> int:
    os.umask(0o077)  # everything this command and its children write is the owner's only
    if (
        settings.flower_address not in ("127.0.0.1", "localhost", "::1")
        and not settings.flower_basic_auth
    ):
        return fail("MEMSIEVE_FLOWER_BASIC_AUTH is required when Flower binds beyond localhost")
    services = EmbeddedServices(settings.home)
    started_pg = not settings.database_url and not services.pg.running()
    started_redis = not settings.redis_url and not services.redis.running()
    settings = resolve(settings)
    from memsieve.store.postgres import Store

    store = Store(settings.database_url or "", max_size=1)
    applied = store.migrate()
    store.close()
    env = _child_env(settings)
    worker_cmd = [
        sys.executable,
        "-m",
        "memsieve.cli.main",
        "worker",
        "--concurrency",
        str(args.concurrency or settings.concurrency),
    ]
    children = [Supervised("worker", lambda: subprocess.Popen(worker_cmd, env=env))]
    if settings.flower_port:
        flower_cmd, flower_env = flower_command(settings, env)
        children.append(
            Supervised(
                "flower",
                lambda: subprocess.Popen(
                    flower_cmd,
                    env=flower_env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                ),
            )
        )
    for child in children:
        child.start()
    pid_file = settings.home / UP_PID
    pid_file.write_text(str(os.getpid()))
    print(
        "memsieve is up\n"
        f"  database   {redact_url(settings.database_url or '')}\n"
        f"  broker     {redact_url(settings.broker_url or '')}\n"
        f"  embedder   {settings.embedder}\n"
        f"  migrations {', '.join(applied) if applied else 'up to date'}\n"
        + (
            f"  flower     http://{settings.flower_address}:{settings.flower_port}\n"
            if settings.flower_port
            else ""
        )
        + (
            f"  metrics    http://{settings.metrics_address}:{settings.metrics_port}/metrics\n"
            if settings.metrics_port
            else ""
        )
        + "Ctrl-C stops it; accepted events stay in the inbox and are written on the next start.",
        flush=True,
    )
    stopping = False

    def _stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    code = 0
    try:
        while not stopping:
            for child in children:
                child.tick()
            time.sleep(0.2)
    finally:
        print(
            "memsieve: stopping (warm shutdown: running tasks finish, unacked messages return to the queue)",
            flush=True,
        )
        procs = [c.proc for c in children if c.proc is not None]
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
        if started_redis:
            services.redis.stop()
        if started_pg:
            services.pg.stop()
        if started_pg or started_redis:
            (settings.home / "services.json").unlink(missing_ok=True)
        if read_pid(pid_file) == os.getpid():
            pid_file.unlink(missing_ok=True)
        print("memsieve: stopped", flush=True)
    return code


def cmd_worker(settings: Settings, args: argparse.Namespace) -> int:
    os.umask(0o077)  # metrics samples, logs: the owner's only
    settings = resolve(settings)
    from memsieve.app import configure
    from memsieve.flow.pipeline import Pipeline
    from memsieve.store.postgres import Store

    store = Store(settings.database_url or "", max_size=1)
    # The database may still be starting (a compose stack, a failover): wait for it with
    # backoff instead of exiting; a wrong setting still fails, loudly, after the wait.
    try:
        _migrate_when_reachable(store, settings.startup_wait)
    except (dberrors.StoreUnavailable, dberrors.StoreRefused) as exc:
        why = str(exc.__cause__ or exc).strip()
        return fail(f"database not reachable at {redact_url(settings.database_url or '')}: {why}")
    # Fail loudly before taking any message if the embedder does not match the store.
    try:
        Pipeline(settings, store=store).ensure_bound()
    except errors.EmbedderMismatch as exc:
        return fail(str(exc))
    store.close()
    os.environ.update(_child_env(settings))
    app = configure(settings)
    from memsieve import metrics

    if settings.metrics_port:
        # Before the pool forks: children write samples where this process serves them.
        metrics.prepare_multiprocess(settings.home)
        from memsieve.ops import home

        key = home.install_key(settings.key_path) if settings.metrics_hash_namespaces else None
        metrics.serve(
            settings.metrics_port, settings.database_url, settings.metrics_address, hash_key=key
        )
    argv = [
        "worker",
        f"--loglevel={settings.log_level}",
        f"--concurrency={args.concurrency or settings.concurrency}",
        f"--pool={args.pool}",
        "-E",
        "--without-gossip",
        "--without-mingle",
        f"--queues={args.queue}",
    ]
    if args.hostname:
        argv.append(f"--hostname={args.hostname}")
    if not args.drain:
        app.worker_main(argv)
        return 0
    from memsieve.flow import drain

    watcher = drain.for_worker(
        app,
        Store(settings.database_url or "", max_size=1),
        args.queue.split(","),
        args.drain_timeout,
    )
    app.worker_main(argv)
    return drain.EXIT_TIMEOUT if watcher.result is None else watcher.result


def _migrate_when_reachable(store: Any, wait_s: float) -> None:
    """Apply migrations, waiting (with backoff, up to MEMSIEVE_STARTUP_WAIT seconds) for a
    database that is still starting: a compose stack, a failover."""
    for attempt in Retrying(
        retry=retry_if_exception_type(dberrors.StoreUnavailable),
        wait=wait_exponential_jitter(initial=0.5, max=10),
        stop=stop_after_delay(wait_s),
        before_sleep=lambda rs: log.warning(
            "database not reachable yet (attempt %d); retrying", rs.attempt_number
        ),
        reraise=True,
    ):
        with attempt:
            store.migrate()


def cmd_migrate(settings: Settings, args: argparse.Namespace) -> int:
    settings = resolve(settings, need_redis=False)
    from memsieve.store.postgres import Store

    applied = Store(settings.database_url or "", max_size=1).migrate()
    print("applied: " + ", ".join(applied) if applied else "up to date")
    return 0


def cmd_down(settings: Settings, args: argparse.Namespace) -> int:
    # A running `memsieve up` is stopped first, as Ctrl-C would: its worker finishes its
    # tasks while the services are still there (stopped under it, the worker would retry
    # a vanished Redis without end).
    pid = read_pid(settings.home / UP_PID)
    if pid is not None and _is_up(pid):
        print(f"stopping memsieve up (pid {pid}) ...", flush=True)
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 120
        while _is_up(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _is_up(pid):
            return fail(f"memsieve up (pid {pid}) did not stop within 120 s; nothing else stopped")
    EmbeddedServices(settings.home).stop()
    print(f"stopped embedded services in {settings.home}")
    return 0


UP_PID = "up.pid"


def _is_up(pid: int) -> bool:
    """Whether `pid` is a live `memsieve up` (not another process that reuses the pid)."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z" and b"up" in cmd and any(b"memsieve" in part for part in cmd)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from memsieve.constants import QUEUES

    p = sub.add_parser(
        "up", help="run everything on this machine: embedded Postgres+Redis, worker, Flower"
    )
    p.add_argument(
        "--concurrency", type=int, default=0, help="worker processes (default MEMSIEVE_CONCURRENCY)"
    )
    p.set_defaults(func=cmd_up)
    p = sub.add_parser("worker", help="a Celery worker against the configured services")
    p.add_argument("--concurrency", type=int, default=0)
    p.add_argument("--pool", default="prefork", choices=["prefork", "threads", "solo"])
    p.add_argument("--queue", default=",".join(QUEUES))
    p.add_argument("--hostname", default="")
    p.add_argument(
        "--drain",
        action="store_true",
        help="process what is queued (broker and pending events), then exit 0",
    )
    p.add_argument(
        "--drain-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="with --drain: stop and exit 3 if work is left after this long [default: 300]",
    )
    p.set_defaults(func=cmd_worker)
    p = sub.add_parser("migrate", help="apply pending SQL migrations")
    p.set_defaults(func=cmd_migrate)
    p = sub.add_parser(
        "down", help="stop the embedded Postgres and Redis started for MEMSIEVE_HOME"
    )
    p.set_defaults(func=cmd_down)


def settings_for(args: argparse.Namespace) -> Settings:
    """Settings from the environment, logging set up (lives in memsieve.cli.main)."""
    from memsieve.cli import main

    return main.settings_for(args)

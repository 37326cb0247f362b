"""Prometheus metrics of the worker.

Celery's prefork children each have their own memory, so counters incremented in a child
are invisible to an HTTP server in the parent. We use prometheus_client's multiprocess
mode: `memsieve worker` calls `prepare_multiprocess()` before it forks, every process
writes its samples to mmap files in PROMETHEUS_MULTIPROC_DIR, and the parent serves them
all on one port (MEMSIEVE_METRICS_PORT) through a MultiProcessCollector. One port per
worker host, whatever the concurrency; the alternative (a server per child on offset ports)
would make the scrape config depend on the pool size.

Labels are bounded on purpose: no namespace label on counters (tenants are unbounded);
the inbox gauges, computed at scrape time from Postgres, name only namespaces that have
pending events. Recording never raises: metrics must not break the write path.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

log = logging.getLogger("memsieve.metrics")

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
_LAT = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

# Every metric has a label so that no value is created at import time: values created after
# prepare_multiprocess() are the multiprocess kind (see prometheus_client.values).
DECISIONS = Counter(
    "memsieve_decisions_total",
    "Terminal decisions of capture events",
    ["decision", "kind"],  # inserted | superseded | merged | dead; retro | correction | ...
)
REFUSALS = Counter("memsieve_refusals_total", "Events refused at capture, by reason", ["reason"])
EMBED_REQUESTS = Counter(
    "memsieve_embedding_requests_total", "Embedding provider calls", ["model", "outcome"]
)
EMBED_TEXTS = Counter("memsieve_embedding_texts_total", "Texts sent to the embedder", ["model"])
EMBED_TOKENS = Counter(
    "memsieve_embedding_tokens_total", "Tokens sent (OpenAI embedder)", ["model"]
)
EMBED_RETRIES = Counter("memsieve_embedding_retries_total", "Provider call retries", ["model"])
EMBED_LATENCY = Histogram(
    "memsieve_embedding_seconds",
    "Embedding call latency (retries included)",
    ["model"],
    buckets=_LAT,
)
LOCK_WAIT = Histogram(
    "memsieve_lock_wait_seconds", "Time spent acquiring a namespace lock", ["outcome"], buckets=_LAT
)
WRITE_SECONDS = Histogram(
    "memsieve_write_batch_seconds",
    "One gate transaction (advisory lock held)",
    ["outcome"],
    buckets=_LAT,
)


# -- recording (called from the pipeline; never raises) ----------------------------------
def _safe(fn: Any) -> Any:
    def wrapper(*a: Any, **k: Any) -> None:
        try:
            fn(*a, **k)
        except Exception as exc:  # noqa: BLE001
            log.debug("metrics: %s", exc)

    return wrapper


@_safe
def decided(decision: str, kind: str | None) -> None:
    DECISIONS.labels(decision, kind or "unknown").inc()


@_safe
def outcomes(items: Iterable[Any], kinds: dict[str, str]) -> None:
    """Count written outcomes (objects with event_id and decision); skips are no decision."""
    for o in items:
        if o.decision != "skipped":
            DECISIONS.labels(o.decision, kinds.get(o.event_id, "unknown")).inc()


@_safe
def refused(reason: str | None) -> None:
    REFUSALS.labels(reason or "unknown").inc()


@_safe
def lock_waited(seconds: float, acquired: bool) -> None:
    LOCK_WAIT.labels("acquired" if acquired else "busy").observe(seconds)


@_safe
def wrote(seconds: float, ok: bool) -> None:
    WRITE_SECONDS.labels("ok" if ok else "error").observe(seconds)


@_safe
def embedded(
    model: str, texts: int, seconds: float, outcome: str, tokens: int = 0, retries: int = 0
) -> None:
    EMBED_REQUESTS.labels(model, outcome).inc()
    EMBED_TEXTS.labels(model).inc(texts)
    EMBED_LATENCY.labels(model).observe(seconds)
    if tokens:
        EMBED_TOKENS.labels(model).inc(tokens)
    if retries:
        EMBED_RETRIES.labels(model).inc(retries)


# -- inbox gauges, computed at scrape time ------------------------------------------------
def namespace_label(namespace: str, hash_key: bytes | None) -> str:
    """The namespace, or with MEMSIEVE_METRICS_HASH_NAMESPACES a keyed digest of it, so a
    scrape does not name tenants (`memsieve stats --json` maps them back)."""
    if hash_key is None:
        return namespace
    import hashlib
    import hmac

    return "ns-" + hmac.new(hash_key, namespace.encode(), hashlib.sha256).hexdigest()[:12]


class InboxCollector(Collector):
    """Inbox depth and age of the oldest pending event, read from Postgres per scrape."""

    def __init__(self, database_url: str, hash_key: bytes | None = None) -> None:
        self.url = database_url
        self.hash_key = hash_key

    def collect(self) -> Iterator[GaugeMetricFamily]:
        import psycopg
        from memsieve.store.queries import QUERIES

        depth = GaugeMetricFamily(
            "memsieve_inbox_pending", "Pending events in the inbox", labels=["namespace"]
        )
        age = GaugeMetricFamily(
            "memsieve_inbox_oldest_pending_seconds",
            "Age of the oldest pending event",
            labels=["namespace"],
        )
        up = GaugeMetricFamily("memsieve_inbox_up", "1 if the inbox could be read at this scrape")
        total_depth, oldest = 0, 0.0
        try:
            with psycopg.connect(
                self.url, connect_timeout=3, options="-c statement_timeout=3000"
            ) as conn:
                rows = conn.execute(QUERIES["inbox_depth"]).fetchall()
            for ns, n, a in rows:
                label = namespace_label(ns or "", self.hash_key)
                depth.add_metric([label], n)
                age.add_metric([label], a)
                total_depth, oldest = total_depth + n, max(oldest, a)
            up.add_metric([], 1)
        except Exception as exc:  # noqa: BLE001 - a scrape must answer even when Postgres does not
            log.warning("metrics: inbox not readable: %s", type(exc).__name__)
            up.add_metric([], 0)
        yield depth
        yield age
        yield GaugeMetricFamily(
            "memsieve_inbox_pending_total", "Pending events, all namespaces", value=total_depth
        )
        yield GaugeMetricFamily(
            "memsieve_inbox_oldest_pending_age_seconds",
            "Oldest pending event, all namespaces",
            value=oldest,
        )
        yield up


# -- process setup ------------------------------------------------------------------------
def prepare_multiprocess(home: Path, name: str = "worker") -> Path:
    """Point prometheus_client at a fresh per-worker directory; call before forking children."""
    path = Path(os.environ.get(MULTIPROC_ENV) or home / "metrics" / f"{name}-{os.getpid()}")
    shutil.rmtree(path, ignore_errors=True)  # samples of a previous run are not ours
    path.mkdir(parents=True, exist_ok=True)
    os.environ[MULTIPROC_ENV] = str(path)
    values = sys.modules.get("prometheus_client.values")
    if values is not None:
        values.ValueClass = values.get_value_class()  # type: ignore[attr-defined]
    return path


def registry(database_url: str | None, hash_key: bytes | None = None) -> CollectorRegistry:
    from prometheus_client import REGISTRY, multiprocess

    reg = CollectorRegistry(auto_describe=True)
    if os.environ.get(MULTIPROC_ENV):
        multiprocess.MultiProcessCollector(reg)
    else:
        reg = REGISTRY  # one process (tests, `memsieve write`): the default registry
    if database_url:
        try:
            reg.register(InboxCollector(database_url, hash_key))
        except ValueError:
            pass  # already registered in this process
    return reg


_served: dict[int, Any] = {}


def serve(
    port: int,
    database_url: str | None = None,
    addr: str = "127.0.0.1",
    hash_key: bytes | None = None,
) -> bool:
    """Serve /metrics on addr:port from this process (once). False if the port is taken."""
    if not port or port in _served:
        return bool(port)
    from memsieve.settings import is_loopback

    if not is_loopback(addr):
        log.warning(
            "metrics served on %s without authentication: anyone who reaches it reads them%s",
            addr,
            "" if hash_key else " (namespace labels in clear; MEMSIEVE_METRICS_HASH_NAMESPACES)",
        )
    try:
        _served[port] = start_http_server(
            port, addr=addr, registry=registry(database_url, hash_key)
        )
    except OSError as exc:
        log.warning("metrics port %d unavailable: %s", port, exc)
        return False
    log.info("metrics on http://%s:%d/metrics", addr, port)
    return True


def kinds_of(pending: Sequence[Any]) -> dict[str, str]:
    return {p.event_id: p.kind for p in pending}


@_safe
def died(event_ids: Sequence[str]) -> None:
    """Events that used up their attempts (the kind is not at hand where that is decided)."""
    if event_ids:
        DECISIONS.labels("dead", "unknown").inc(len(event_ids))

"""Prometheus metrics of the worker (multiprocess-safe is left to the exporter's defaults)."""

from __future__ import annotations

import logging

from prometheus_client import Counter, Histogram, start_http_server

log = logging.getLogger("memsieve.metrics")

DECISIONS = Counter("memsieve_decisions_total", "Gate decisions", ["namespace", "kind", "decision"])
REFUSALS = Counter("memsieve_refusals_total", "Capture refusals", ["reason"])
EMBED_REQUESTS = Counter("memsieve_embedding_requests_total", "Embedding provider requests", ["model"])
EMBED_LATENCY = Histogram("memsieve_embedding_seconds", "Embedding request latency", ["model"])
LOCK_WAIT = Histogram("memsieve_lock_wait_seconds", "Namespace lock wait")

_served = False


def serve(port: int) -> None:
    global _served
    if port and not _served:
        try:
            start_http_server(port, addr="127.0.0.1")
            _served = True
        except OSError as exc:
            log.warning("metrics port %d unavailable: %s", port, exc)

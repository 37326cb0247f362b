"""What the worker shows about a message: never its text.

- `CaptureRequest` replaces the producer's `argsrepr` (which Celery fills with the repr of
  the arguments unless the producer says otherwise) with a summary of counts and event
  ids, so Flower and worker events never show lesson text or a secret, whoever produced.
- `MemsieveConsumer` records messages Celery cannot decode or does not know in the ledger
  as rejected (with an id derived from the raw bytes) instead of logging their body.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from celery.worker.consumer import Consumer
from celery.worker.request import Request

log = logging.getLogger("memsieve.consumer")


def describe_payload(payload: Any) -> str:
    """Counts, namespaces and the first event id of a capture payload; no text."""
    from memsieve.flow.pipeline import event_id_for

    items = payload if isinstance(payload, list) else [payload]
    namespaces = sorted(
        {
            i["namespace"]
            for i in items
            if isinstance(i, dict) and isinstance(i.get("namespace"), str)
        }
    )
    ns = ",".join(namespaces)[:80]
    first = event_id_for(items[0]) if items else "-"
    return f"[{len(items)} event(s) ns={ns} first={first}]"


class CaptureRequest(Request):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        try:
            task_args = self._Request__payload[0]  # type: ignore[attr-defined]
            self._argsrepr = describe_payload(task_args[0]) if task_args else "[]"
        except Exception:  # noqa: BLE001 - a summary must never break delivery
            self._argsrepr = "[unreadable]"
        self._kwargsrepr = "{}"


def _raw_body(message: Any) -> bytes:
    body = getattr(message, "body", b"")
    if isinstance(body, str):
        return body.encode("utf-8", "surrogatepass")
    return body if isinstance(body, bytes) else repr(body).encode()


class MemsieveConsumer(Consumer):  # type: ignore[misc]
    def _record(self, message: Any, reason: str, detail: str) -> None:
        from memsieve.delivery.broker import record_garbage

        record_garbage(_raw_body(message), reason, detail)

    def on_decode_error(self, message: Any, exc: Exception) -> None:
        self._record(message, "undecodable_message", f"cannot decode: {type(exc).__name__}")
        message.ack()

    def on_unknown_message(self, body: Any, message: Any) -> None:
        self._record(message, "not_a_task_message", "message is not a Celery task")
        message.ack()

    def on_unknown_task(self, body: Any, message: Any, exc: Exception) -> None:
        name = str(message.headers.get("task", "?"))[:80] if message.headers else "?"
        digest = hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:8]
        self._record(message, "unknown_task", f"no task named like that ({digest})")
        message.ack()

    def on_invalid_task(self, body: Any, message: Any, exc: Exception) -> None:
        self._record(message, "invalid_task_message", f"invalid task message: {type(exc).__name__}")
        message.ack()

"""What the worker shows about a message: never its text.

- `CaptureRequest` replaces the producer's `argsrepr` (which Celery fills with the repr of
  the arguments unless the producer says otherwise) with a summary of counts and event
  ids, so Flower and worker events never show lesson text or a secret, whoever produced.
- `MemsieveConsumer` screens every message before Celery unpacks it
  (memsieve.delivery.envelope): one for a memsieve task is rewritten as a clean protocol-2
  message; one that is too large, cannot be decoded, is not a task, names an unknown task or
  has a malformed envelope is recorded in the ledger as rejected (with an id derived from
  the raw bytes, never logging its body) and acked. Whatever else goes wrong while Celery
  takes a message in is recorded the same way: no message can stop the consumer.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import Any

from celery.worker.consumer import Consumer
from celery.worker.request import Request
from kombu.utils.json import dumps
from memsieve import constants
from memsieve.delivery import envelope, inflate
from memsieve.ids import describe_payload

log = logging.getLogger("memsieve.consumer")


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


_TASKS = (constants.TASK_CAPTURE, constants.TASK_FLUSH)


def _ack(message: Any) -> None:
    try:
        if not message.acknowledged:
            message.ack()
    except Exception as exc:  # noqa: BLE001 - an ack the broker lost is redelivered, then recorded again
        log.warning("could not ack a refused message: %s", type(exc).__name__)


def max_message_bytes() -> int:
    from memsieve.app import current_settings

    return current_settings().max_message_bytes


class MemsieveConsumer(Consumer):  # type: ignore[misc]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # kombu inflates a compressed body as it builds the message: capped from here on.
        inflate.install(max_message_bytes)
        super().__init__(*args, **kwargs)

    def _refuse(self, message: Any, reason: str, detail: str) -> None:
        """Record the message as rejected, then ack it; if the ledger is unreachable,
        put it back (`_record_part`)."""
        if self._record_part(message, _raw_body(message), reason, detail):
            _ack(message)

    def _record_part(self, message: Any, raw: bytes, reason: str, detail: str) -> bool:
        """Record a refused message, or the refused part of one that also carries events
        (its own row, under the message's raw id); if the ledger is unreachable, put the
        message back after a pause (the store is down, nothing can progress anyway) and
        return False: a redelivery records it then, and its events are idempotent."""
        from memsieve.delivery.broker import record_garbage

        if record_garbage(raw, reason, detail):
            return True
        time.sleep(1.0)
        try:
            if not message.acknowledged:
                message.reject(requeue=True)
        except Exception as exc:  # noqa: BLE001 - unacked, it comes back after the timeout
            log.warning("could not requeue a message: %s", type(exc).__name__)
        return False

    def _screen(self, message: Any) -> bool:
        """Rewrite a memsieve task message in place; False if it was refused (and acked)."""
        raw = _raw_body(message)
        limit = max_message_bytes()
        if len(raw) > limit:
            self._refuse(
                message,
                "message_too_large",
                f"message of {len(raw)} bytes exceeds MEMSIEVE_MAX_MESSAGE_BYTES={limit}",
            )
            return False
        headers = message.headers
        if not isinstance(headers, dict):
            return True  # Celery's own path: an unknown message, recorded below
        task = headers.get("task")
        protocol = 2
        body: Any = None
        if task is None:
            try:
                body = message.decode()
            except Exception as exc:  # noqa: BLE001 - any decoder error
                self._refuse(message, "undecodable_message", f"cannot decode: {type(exc).__name__}")
                return False
            if not isinstance(body, dict) or "task" not in body:
                return True  # not a task: Celery records it as unknown
            task, protocol = body.get("task"), 1
        if task not in _TASKS:
            # Celery's own tasks (celery.chord_unlock, celery.accumulate, ...) are registered
            # too: nothing but memsieve's tasks may be run from the queue.
            name = str(task)[:80]
            digest = hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:8]
            self._refuse(message, "unknown_task", f"no memsieve task named like that ({digest})")
            return False
        dropped = 0
        try:
            if body is None:
                body = message.decode()
        except Exception as exc:  # noqa: BLE001 - any decoder error
            # kombu wraps the decoder's error (DecodeError from RecursionError): one event
            # nested past what the decoder can read. The others are read one by one
            # (`envelope.salvage_capture`); a body that is not a plain capture is refused.
            # The same for any JSON body that does not decode whole: an integer past
            # Python's 4,300 digits, invalid UTF-8 inside one event's string.
            json_body = str(message.content_type or "").endswith("json")
            capture = task == constants.TASK_CAPTURE
            salvaged = envelope.salvage_capture(raw) if json_body and capture else None
            if salvaged is None or not salvaged[0]:
                reason = "undecodable_message" if salvaged is None else "invalid_event"
                self._refuse(message, reason, f"cannot decode: {type(exc).__name__}")
                return False
            body, dropped = [[salvaged[0]], {}, {}], salvaged[1]
        try:
            clean = envelope.screen(
                str(task), protocol, headers if protocol == 2 else {}, body, raw, dropped
            )
            encoded = dumps(clean.body)
        except envelope.Refused as exc:
            self._refuse(message, exc.reason, exc.detail)
            return False
        except (ValueError, TypeError, RecursionError) as exc:
            self._refuse(message, "invalid_task_message", f"cannot re-encode: {type(exc).__name__}")
            return False
        if clean.refusal is not None and not self._record_part(message, raw, *clean.refusal):
            return False
        message.headers = clean.headers
        message.body = encoded.encode("utf-8")
        message.content_type = "application/json"
        message.content_encoding = "utf-8"
        message._decoded_cache = clean.body
        return True

    def create_task_handler(self, *args: Any, **kwargs: Any) -> Any:
        handle = super().create_task_handler(*args, **kwargs)
        connection_errors = tuple(self.connection_errors or ())

        def on_task_received(message: Any) -> Any:
            try:
                if not self._screen(message):
                    return None
                return handle(message)
            except connection_errors:
                raise  # the consumer reconnects; the unacked message comes back
            except Exception as exc:  # noqa: BLE001 - no message may stop the consumer
                self._refuse(
                    message,
                    "invalid_task_message",
                    f"cannot take the message: {type(exc).__name__}",
                )
                return None

        return on_task_received

    def on_decode_error(self, message: Any, exc: Exception) -> None:
        if isinstance(exc, inflate.TooLarge):
            detail = f"{exc}; exceeds MEMSIEVE_MAX_MESSAGE_BYTES={exc.limit}"
            self._refuse(message, "message_too_large", detail)
            return
        detail = str(exc) if isinstance(exc, inflate.NotAccepted) else type(exc).__name__
        self._refuse(message, "undecodable_message", f"cannot decode: {detail}")

    def on_unknown_message(self, body: Any, message: Any) -> None:
        self._refuse(message, "not_a_task_message", "message is not a Celery task")

    def on_unknown_task(self, body: Any, message: Any, exc: Exception) -> None:
        name = str(message.headers.get("task", "?"))[:80] if message.headers else "?"
        digest = hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:8]
        self._refuse(message, "unknown_task", f"no task named like that ({digest})")

    def on_invalid_task(self, body: Any, message: Any, exc: Exception) -> None:
        self._refuse(message, "invalid_task_message", f"invalid task message: {type(exc).__name__}")

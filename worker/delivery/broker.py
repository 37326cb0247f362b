"""A Redis broker transport that survives garbage on the queue.

kombu's Redis channel JSON-decodes every item it pops and hands it to the consumer; an
item that is not a kombu envelope (someone LPUSHed raw bytes) raises out of the event
loop and kills the worker ("Unrecoverable error"). This channel records such an item in
the ledger as rejected — under an id derived from its bytes, never logging the body —
and carries on. Installed for the `redis://` scheme by `install()`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from kombu.transport import TRANSPORT_ALIASES, redis
from kombu.utils.encoding import bytes_to_str
from kombu.utils.json import loads
from memsieve.schemas.events import raw_event_id
from memsieve.store.rows import InboxEvent
from redis.exceptions import ConnectionError as RedisConnectionError

log = logging.getLogger("memsieve.broker")


# Where a garbage item is recorded: memsieve.flow.runtime registers its pipeline's store
# (set by the worker process; this module sits below the pipeline and cannot import it).
_recorder: Callable[[Sequence[InboxEvent]], object] | None = None


def set_recorder(record: Callable[[Sequence[InboxEvent]], object]) -> None:
    global _recorder
    _recorder = record


def record_garbage(raw: bytes, reason: str, detail: str) -> bool:
    """Record a refused broker item under an id derived from its bytes; False if the
    ledger could not be reached (the caller then leaves the item on the queue)."""
    eid = raw_event_id(raw)
    try:
        if _recorder is None:
            raise RuntimeError("no recorder registered")
        _recorder(
            [
                InboxEvent(
                    eid,
                    None,
                    None,
                    None,
                    None,
                    payload_hash=eid,
                    status="rejected",
                    reason=reason,
                    detail=detail,
                )
            ]
        )
    except Exception as exc:  # noqa: BLE001 - never let bookkeeping kill the consumer
        log.error("could not record %s message %s: %s", reason, eid, type(exc).__name__)
        return False
    from memsieve import metrics

    metrics.refused(reason)
    log.warning(
        "rejected a broker item that is not a message",
        extra={"event_id": eid, "decision": "rejected", "reason": reason},
    )
    return True


def envelope_problem(channel: Any, payload: Any) -> str | None:
    """Why a decoded Redis item cannot become a kombu message (None if it can).

    kombu reads these fields unguarded when it builds the message and files it as unacked;
    any of them missing or of the wrong type raised out of the event loop.
    """
    if not isinstance(payload, dict):
        return "not a kombu envelope"
    props = payload.get("properties")
    if not isinstance(props, dict):
        return "no properties"
    tag = props.get("delivery_tag")
    if not isinstance(tag, str) or not tag or len(tag) > 200:
        return "no delivery tag"
    info = props.get("delivery_info")
    if not isinstance(info, dict):
        return "no delivery info"
    if not isinstance(info.get("exchange"), str) or not isinstance(info.get("routing_key"), str):
        return "bad delivery info"
    for name in ("content-type", "content-encoding"):
        if not isinstance(payload.get(name), (str, type(None))):
            return f"bad {name}"
    if not isinstance(payload.get("headers"), (dict, type(None))):
        return "bad headers"
    body = payload.get("body")
    if not isinstance(body, (str, bytes, type(None))):
        return "bad body"
    encoding = props.get("body_encoding")
    if not isinstance(encoding, (str, type(None))):
        return "bad body encoding"
    if body:
        try:
            channel.decode_body(body, encoding)
        except Exception:  # noqa: BLE001 - unknown codec, bad base64, ...
            return "undecodable body"
    return None


class SafeChannel(redis.Channel):
    def _brpop_read(self, **options: Any) -> bool:
        try:
            try:
                dest__item = self.client.parse_response(self.client.connection, "BRPOP", **options)
            except self.connection_errors:
                self.client.connection.disconnect()
                raise
            if not dest__item:
                raise redis.Empty()
            dest, item = dest__item
            dest = bytes_to_str(dest).rsplit(self.sep, 1)[0]
            self._queue_cycle.rotate(dest)
            raw = item if isinstance(item, bytes) else str(item).encode("utf-8", "replace")
            try:
                payload = loads(bytes_to_str(item))
                problem = envelope_problem(self, payload)
            except Exception as exc:  # noqa: BLE001
                problem = type(exc).__name__
            if problem is not None:
                if not record_garbage(
                    raw, "not_a_task_message", f"broker item is not a message: {problem}"
                ):
                    # The ledger is down: put the item back (at the end of the line).
                    time.sleep(1.0)
                    self.client.lpush(dest, item)
                return True
            self.connection._deliver(payload, dest)
            return True
        finally:
            self._in_poll = None  # type: ignore[assignment]
            flush = getattr(self, "_flush_brpop_reauth", None)
            if flush is not None:
                flush()

    def _connparams(self, asynchronous: bool = False) -> Any:
        # kombu bug: after the broker drops, the consumer closes the connection, and the
        # channel's close tries to restore unacked messages through a new client built
        # from a connection whose `client` is already None: AttributeError, "Unrecoverable
        # error", the worker exits. Report it as what it is, a lost connection, which the
        # consumer ignores while it reconnects (unacked messages are restored later by the
        # visibility timeout).
        if self.connection.client is None:
            raise RedisConnectionError("broker connection closed")
        return super()._connparams(asynchronous=asynchronous)


class SafeRedisTransport(redis.Transport):
    Channel = SafeChannel


def install() -> None:
    TRANSPORT_ALIASES["redis"] = "memsieve.delivery.broker:SafeRedisTransport"

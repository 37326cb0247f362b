"""`memsieve.client`: the producer side. Check an event here, send it only if it is clean.

A secret that reaches the broker is on disk there (Redis' append-only file, RabbitMQ's
message store) until the worker has refused it and the file is rewritten. This client
validates each event against the schema and runs the worker's own secret scanner
*before* anything is sent, so a producer that uses it never puts a secret on the broker:

    from memsieve.client import CaptureClient, Refused

    client = CaptureClient("redis://memsieve:…@127.0.0.1:6379/0")
    try:
        event_id = client.capture({"namespace": "web", "kind": "retro",
                                   "heading": "File naming", "content": "…"})
    except Refused as exc:
        log.warning("not captured: %s", exc)   # says what and why, never the secret
    except client.Unavailable:
        ...                                     # the broker did not answer in time

A plain `redis://` broker URL is written to directly (memsieve.delivery.publish: the
message Celery would send, without importing Celery); any other goes through Celery.

Given the install key (`install_key=`, the bytes of MEMSIEVE_KEY_FILE), each clean
event is sent with a scan stamp (memsieve.delivery.stamp): a worker of the same install
and scanner version then does not scan it a second time. Without it, the worker scans.

It never blocks the agent for long: connecting and publishing are bounded
(`timeout`, default 3 s in all), after which `Unavailable` is raised and nothing is
retried behind the caller's back.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from memsieve import constants
from memsieve.capture import policy, secrets
from memsieve.delivery import publish, stamp
from memsieve.schemas import events as ev
from pydantic import ValidationError


class Refused(ValueError):
    """The event was not sent. `reason` is `invalid` or `secret`; the message names the
    fields and kinds, never a value."""

    def __init__(self, reason: str, detail: str, fields: tuple[str, ...] = ()) -> None:
        super().__init__(f"{reason}: {detail}; nothing was sent")
        self.reason = reason
        self.detail = detail
        self.fields = fields


class Unavailable(ConnectionError):
    """The broker did not take the event within the time limit; it may not have been sent."""


def check(event: Mapping[str, Any] | ev.CaptureEvent) -> ev.CaptureEvent:
    """The validated event, or `Refused` (schema error or a secret in any field)."""
    if isinstance(event, ev.CaptureEvent):
        parsed = event
    else:
        try:
            parsed = ev.CaptureEvent.model_validate(dict(event))
        except ValidationError as exc:
            # A made-up field's name is echoed by the message: it may be the secret.
            raise Refused("invalid_event", secrets.redact(ev.first_error(exc))) from None
    found = secrets.scan_fields(policy.event_fields(parsed))
    if found:
        where = tuple(dict.fromkeys(name.split("[")[0] for name in found))
        kinds = sorted({f.kind for fs in found.values() for f in fs})
        raise Refused("secret", f"{', '.join(kinds)} in {', '.join(where)}", where)
    return parsed


class CaptureClient:
    """Sends checked capture events to memsieve's queue through a Celery broker."""

    Unavailable = Unavailable

    def __init__(
        self,
        broker_url: str,
        timeout: float = 3.0,
        queue: str = constants.QUEUE,
        install_key: bytes | None = None,
    ):
        self.timeout = timeout
        self.queue = queue
        self._broker_url = broker_url
        self._stamp_key = stamp.stamp_key(install_key) if install_key else None
        # A plain redis:// broker is written to directly (memsieve.delivery.publish);
        # any other goes through a Celery app of its own.
        self._light = (
            publish.RedisPublisher(broker_url, timeout) if publish.light(broker_url) else None
        )
        self._app: Any = None if self._light else self._celery(broker_url, timeout)

    @staticmethod
    def _celery(broker_url: str, timeout: float) -> Any:
        from celery import Celery

        app = Celery("memsieve-producer", broker=broker_url, set_as_current=False)
        app.conf.update(
            task_serializer="json",
            broker_connection_timeout=timeout,
            broker_connection_retry=False,
            broker_connection_max_retries=0,
            broker_transport_options={
                "socket_timeout": timeout,
                "socket_connect_timeout": timeout,
                "max_retries": 0,
            },
            # Even if the producer's own settings turn task-sent events on, the summary
            # below is all they carry.
            task_send_sent_event=False,
        )
        return app

    def capture(self, event: Mapping[str, Any] | ev.CaptureEvent) -> str:
        """Check and send one event; return its event id (`memsieve events --event-id`)."""
        return self.capture_many([event])[0]

    def capture_many(self, events: list[Any]) -> list[str]:
        """Check every event first (none is sent if one is refused), then send them as one
        message; return their ids."""
        checked = [check(e) for e in events]
        payload = [e.model_dump(mode="json", exclude_none=True) for e in checked]
        ids = [e.resolved_id() for e in checked]
        stamps = [stamp.make(self._stamp_key, policy.event_fields(e)) for e in checked]
        headers = {stamp.HEADER: stamps} if any(stamps) else None
        summary = f"[{len(ids)} event(s) ns={','.join(sorted({e.namespace for e in checked}))[:80]} first={ids[0] if ids else '-'}]"
        error: list[BaseException] = []
        light = self._light

        def publish_it() -> None:
            try:
                if light is not None:
                    light.send(constants.TASK_CAPTURE, [payload], self.queue, summary, headers)
                    return
                self._app.send_task(
                    constants.TASK_CAPTURE,
                    args=[payload],
                    queue=self.queue,
                    argsrepr=summary,
                    kwargsrepr="{}",
                    retry=False,
                    headers=headers,
                )
            except BaseException as exc:  # noqa: BLE001 - handed to the caller below
                error.append(exc)

        # A thread bounds the whole publish, whatever the transport does with its timeouts.
        thread = threading.Thread(target=publish_it, name="memsieve-publish", daemon=True)
        thread.start()
        thread.join(self.timeout)
        if thread.is_alive():
            if light is not None:
                # The stuck send keeps its connection and its turn (and closes both when
                # its socket times out); the next capture opens a new one.
                self._light = publish.RedisPublisher(self._broker_url, self.timeout)
            raise Unavailable(f"the broker did not take the event(s) within {self.timeout:g} s")
        if error:
            if isinstance(error[0], publish.Unavailable):
                raise Unavailable(str(error[0])) from None
            raise Unavailable(f"the broker refused: {type(error[0]).__name__}") from None
        return ids

    def close(self) -> None:
        if self._light is not None:
            self._light.close()
        if self._app is not None:
            self._app.close()

    def __enter__(self) -> CaptureClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def capture(event: Mapping[str, Any], broker_url: str, timeout: float = 3.0) -> str:
    """One-shot: check, send, return the event id."""
    with CaptureClient(broker_url, timeout) as client:
        return client.capture(event)

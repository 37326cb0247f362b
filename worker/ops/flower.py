"""`python -m memsieve.ops.flower`: Flower that never shows task arguments, results or
credentials, whoever produced the tasks.

Flower stores every task event it receives and shows its fields. The worker's request
class replaces the capture task's `args` with a summary, but a Python producer that turns
on Celery's `task_send_sent_event` publishes a `task-sent` event carrying Celery's repr
of the arguments (lesson text, a key pair), and a worker's `task-failed` event carries an
exception text that may quote input. This launcher patches Flower before it starts so
that every event is scrubbed before Flower stores it, and every inspect reply (active
and reserved tasks, stats, configuration) before Flower shows it:

- `args`, `kwargs`, `argsrepr`, `kwargsrepr`, `result` become `[hidden]`, except values
  in the exact shapes memsieve itself produces (the capture summary
  `[3 event(s) ns=web first=bf-…]`, a flush's `['namespace']`, a counts dict) that
  the secret scanner finds clean;
- `exception` and `traceback` are redacted like log lines;
- a broker password in worker stats is removed, URLs in configuration are masked.

Options come from the environment only (Flower reads FLOWER_*, Celery reads
CELERY_BROKER_URL), so no credential is on a command line, which every local user can
read in /proc.
"""

from __future__ import annotations

import re
import sys
from functools import partial
from typing import Any

HIDDEN = "[hidden]"
_ARG_FIELDS = ("args", "kwargs", "argsrepr", "kwargsrepr", "result")
_KEEP = (
    re.compile(r"\[\d{1,6} event\(s\) ns=[a-z0-9._,-]{0,80} first=(?:[A-Za-z0-9._:-]{1,128}|-)\]"),
    re.compile(r"\['[a-z0-9][a-z0-9._-]{0,62}'\]"),  # flush(namespace)
    re.compile(r"\{(?:'[a-z_]{1,20}': \d{1,9}(?:, )?){0,12}\}"),  # counts
    re.compile(r"\{\}|\(\)|\[\]|None|\[unreadable\]"),
)


def _clean(value: Any) -> str:
    from memsieve.capture import secrets

    text = value if isinstance(value, str) else repr(value)
    if any(p.fullmatch(text) for p in _KEEP) and not secrets.find_secrets(text):
        return text
    return HIDDEN


def scrub_event(event: dict[str, Any]) -> dict[str, Any]:
    """The event with arguments and results hidden and exception texts redacted."""
    from memsieve import logs

    for name in _ARG_FIELDS:
        if name in event:
            event[name] = _clean(event[name])
    for name in ("exception", "traceback"):
        if isinstance(event.get(name), str):
            event[name] = logs.redact(event[name])
    return event


def _scrub_request(req: Any) -> Any:
    if isinstance(req, dict):
        if isinstance(req.get("request"), dict):  # scheduled: {"eta":…, "request": {…}}
            _scrub_request(req["request"])
        for name in _ARG_FIELDS:
            if name in req:
                req[name] = _clean(req[name])
    return req


def _mask(value: Any) -> Any:
    from memsieve import logs

    if isinstance(value, dict):
        return {k: _mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return logs.redact(value) if isinstance(value, str) else value


def scrub_reply(method: str, response: Any) -> Any:
    """An inspect reply (per worker) as Flower may show it."""
    if method in ("active", "reserved", "scheduled", "revoked") and isinstance(response, list):
        return [_scrub_request(r) for r in response]
    if method == "stats" and isinstance(response, dict):
        broker = (response.get("consumer") or response).get("broker")
        if isinstance(broker, dict):
            broker.pop("password", None)
        return _mask(response)
    if method == "conf":
        return _mask(response)
    return response


def install() -> None:
    """Patch Flower's event intake and inspector (idempotent)."""
    from flower import events, inspector

    if getattr(events.Events, "_memsieve_scrubbed", False):
        return

    def on_event(self: Any, event: dict[str, Any]) -> None:
        self.io_loop.add_callback(partial(self.state.event, scrub_event(event)))

    original = inspector.Inspector._on_update

    def on_update(self: Any, workername: str, method: str, response: Any) -> None:
        original(self, workername, method, scrub_reply(method, response))

    events.Events.on_event = on_event  # type: ignore[method-assign]
    events.Events._memsieve_scrubbed = True  # type: ignore[attr-defined]
    inspector.Inspector._on_update = on_update  # type: ignore[method-assign]


def environment(settings: Any, base: dict[str, str]) -> dict[str, str]:
    """The environment Flower runs in: options and the broker URL, no command-line secret."""
    env = {k: v for k, v in base.items() if not k.startswith("FLOWER_")}
    env.update(
        CELERY_BROKER_URL=settings.broker_url or "",
        FLOWER_PORT=str(settings.flower_port),
        FLOWER_ADDRESS=settings.flower_address,
        FLOWER_PURGE_OFFLINE_WORKERS="60",
    )
    if settings.flower_basic_auth:
        env["FLOWER_BASIC_AUTH"] = settings.flower_basic_auth
    return env


def command() -> list[str]:
    return [sys.executable, "-m", "memsieve.ops.flower"]


def main() -> None:
    install()
    from celery.bin.celery import main as celery_main

    sys.argv = ["celery", "-A", "memsieve.app", "flower"]
    celery_main()


if __name__ == "__main__":
    main()

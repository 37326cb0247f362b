"""Check a task message's envelope before Celery unpacks it.

Celery trusts its envelope: a body that is not the `[args, kwargs, embed]` triple, an
`id` that is not a string, a callback in `embed` or a past `expires` either kill the
worker ("Unrecoverable error"), fail the task with a traceback, or drop the message in
silence. `screen` turns any message for a memsieve task into a clean protocol-2 message
(or refuses it with a reason, which the consumer records in the ledger and acks):

- capture: every positional argument is one event or a list of events; a keyword
  argument other than `payload` (the parameter's name) refuses the message. The clean
  message carries one argument, the list of all events, and no expiry, time limit,
  callback or chain: a capture is never expired, killed or chained. Its producer's scan
  stamps (`memsieve.delivery.stamp.HEADER`) are kept only as a list of well-formed stamps
  or nulls, one per event; the task verifies each one. An event nested deeper than
  `MAX_EVENT_DEPTH` is not passed on (recorded as the message's row, its neighbours run).
- flush: exactly one string argument (a namespace), and optionally `lane` (which
  scheduled-flush marker it clears: one of constants.QUEUES, or null).

An eta is kept only when it parses and lies at most `MAX_ETA_S` ahead (the app's own retry
countdowns, capped at 30 s); any other runs at once: a far eta would hold the message
unacked past the broker's visibility timeout (and run it twice), a bad one would make
Celery refuse the message.

Pure: no I/O. The detail of a refusal never quotes the message.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memsieve import constants
from memsieve.delivery import stamp
from memsieve.schemas.events import MAX_EVENT_DEPTH, NAMESPACE_RE, too_deep

CLEAN_EMBED: dict[str, Any] = {"callbacks": None, "errbacks": None, "chain": None, "chord": None}
TASK_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
MAX_RETRIES_HEADER = 1_000_000


class Refused(Exception):
    """The message cannot be run: `reason` is recorded with `detail` (no content)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass
class Clean:
    headers: dict[str, Any]
    body: list[Any]  # [args, kwargs, embed]
    # A part of the message that is not run, recorded as the message's own rejected row
    # (reason, detail) beside the events it carries (e.g. unknown keyword arguments).
    refusal: tuple[str, str] | None = None


def _task_id(value: Any, raw: bytes) -> str:
    if _safe_id(value):
        return value
    return str(uuid.uuid5(uuid.NAMESPACE_OID, hashlib.sha256(raw).hexdigest()))


def _opt_id(value: Any) -> str | None:
    return value if _safe_id(value) else None


def _safe_id(value: Any) -> bool:
    """A task id Celery may show (worker events, Flower, logs): the shape of an id and no
    secret in it (a token sent as a message's `id` was published by Flower verbatim)."""
    from memsieve.capture.secrets import find_secrets

    return isinstance(value, str) and bool(TASK_ID_RE.match(value)) and not find_secrets(value)


MAX_ETA_S = 60.0


def _eta(value: Any, now: datetime | None = None) -> str | None:
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    try:
        ahead = (when - now).total_seconds()
    except OverflowError:
        return None
    return when.isoformat() if 0 < ahead <= MAX_ETA_S else None


def _retries(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_RETRIES_HEADER:
        return value
    return 0


def _split(protocol: int, body: Any, headers: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """(args, kwargs) of a decoded body, or Refused."""
    if protocol == 2:
        if not isinstance(body, (list, tuple)) or len(body) not in (2, 3):
            raise Refused(
                "invalid_task_message", "body is not the [args, kwargs, embed] triple of a task"
            )
        args, kwargs = body[0], body[1]
    else:
        args, kwargs = body.get("args", []), body.get("kwargs", {})
    if not isinstance(args, (list, tuple)):
        raise Refused("invalid_task_message", "task arguments are not a list")
    if kwargs is None:
        kwargs = {}
    if not isinstance(kwargs, dict):
        raise Refused("invalid_task_message", "task keyword arguments are not a mapping")
    return list(args), kwargs


def capture_items(args: list[Any], kwargs: dict[str, Any]) -> tuple[list[Any], int]:
    """The events a capture message carries (its positional arguments and `payload=`), and
    how many other keyword arguments it has: those are not read as events (the task is
    `capture(payload)`; guessing which keyword holds events could record an event its
    producer never meant, e.g. a `tags=` meant for all of them)."""
    extra = [k for k in kwargs if k != "payload"]
    parts = [*args, *([kwargs["payload"]] if "payload" in kwargs else [])]
    items: list[Any] = []
    for part in parts:
        items.extend(part if isinstance(part, (list, tuple)) else [part])
    if not items:
        raise Refused(
            "invalid_task_message",
            "the capture message carries no event"
            + (
                f" (capture takes no keyword argument but `payload`; {len(extra)} other(s) given)"
                if extra
                else ""
            ),
        )
    return items, len(extra)


# What splits a JSON text into tokens that matter to nesting (strings and their escapes too).
_JSON_MARK = re.compile(r'[\\"\[\]{},]')


def _elements(text: str) -> list[str] | None:
    """The elements of the JSON array `text` (stripped) as texts, found without recursion
    (whatever their depth), or None if `text` is not one well-formed array."""
    if not text.startswith("["):
        return None
    out: list[str] = []
    depth, in_str, skip, begin = 0, False, -1, 1
    for m in _JSON_MARK.finditer(text):
        i, c = m.start(), m.group()
        if i <= skip:
            continue
        if in_str:
            if c == "\\":
                skip = i + 1  # the escaped character
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth == 0:
                last = text[begin:i].strip()
                if last:
                    out.append(last)
                elif out:
                    return None  # "[1,]"
                return out if not text[i + 1 :].strip() else None
        elif c == "," and depth == 1:
            out.append(text[begin:i].strip())
            begin = i + 1
    return None


_UNDECODED = re.compile("[\udc80-\udcff]")


def salvage_capture(raw: bytes) -> tuple[list[Any], int] | None:
    """The events of a protocol-2 capture body that does not decode whole (nested too deep,
    an integer past Python's digit limit, invalid UTF-8 in one event): (those that decode,
    how many did not), read argument by argument; None if the body is not `[args, kwargs]`
    or `[args, kwargs, embed]` with the keyword arguments empty (then it is refused whole)."""
    # Invalid UTF-8 inside one event's string spoils that event, not the message: its
    # bytes become lone surrogates here, and an element holding one is not read.
    top = _elements(raw.decode("utf-8", "surrogateescape").strip())
    if top is None or len(top) not in (2, 3):
        return None
    try:
        if json.loads(top[1]) not in ({}, None):
            return None
    except (ValueError, RecursionError):
        return None
    args = _elements(top[0])
    if args is None:
        return None
    events: list[Any] = []
    dropped = 0
    for arg in args:
        listed = _elements(arg)  # an argument: a list of events (maybe empty), or one event
        for text in listed if listed is not None else [arg]:
            try:
                if _UNDECODED.search(text):
                    raise ValueError("invalid UTF-8")
                events.append(json.loads(text))
            except (ValueError, RecursionError):  # also an integer past Python's digit limit
                dropped += 1
    return events, dropped


def screen(
    task: str, protocol: int, headers: dict[str, Any], body: Any, raw: bytes, dropped: int = 0
) -> Clean:
    """A clean protocol-2 message for `task` (a memsieve task), or Refused. `dropped`: events
    already left out because they could not be decoded (`salvage_capture`)."""
    args, kwargs = _split(protocol, body, headers)
    source = headers if protocol == 2 else body
    clean: dict[str, Any] = {
        "lang": "py",
        "task": task,
        "id": _task_id(source.get("id"), raw),
        "retries": _retries(source.get("retries")),
        "root_id": _opt_id(source.get("root_id")),
        "parent_id": _opt_id(source.get("parent_id")),
        "group": None,
        "eta": _eta(source.get("eta")),
        "expires": None,
        "timelimit": [None, None],
        "ignore_result": True,
        "kwargsrepr": "{}",
    }
    if task == constants.TASK_CAPTURE:
        items, extra = capture_items(args, kwargs)
        # Scan stamps, one per event, kept only when well-formed (the task verifies them).
        stamps = stamp.header_value(source.get(stamp.HEADER), len(items))
        deep = {n for n, item in enumerate(items) if too_deep(item)}
        gone = len(deep) + dropped
        if deep:
            items = [item for n, item in enumerate(items) if n not in deep]
            if stamps is not None:
                stamps = [s for n, s in enumerate(stamps) if n not in deep]
        if gone and not items:
            raise Refused(
                "invalid_event",
                f"every event of the message nests deeper than {MAX_EVENT_DEPTH} levels",
            )
        clean["argsrepr"] = f"[{len(items)} event(s)]"
        if stamps is not None:
            clean[stamp.HEADER] = stamps
        refusal = None
        parts = []
        if gone:
            parts.append(
                f"{gone} event(s) nest deeper than {MAX_EVENT_DEPTH} levels or do not decode"
                " (an integer past 4,300 digits, invalid UTF-8), not read"
            )
        if extra:
            # Names and values are not repeated: either may hold a secret.
            parts.append(
                f"capture takes no keyword argument but `payload`: {extra} other(s) not read"
            )
        if parts:
            refusal = (
                "invalid_event" if gone else "unexpected_keyword_argument",
                "; ".join(parts)
                + f"; the message's {len(items)} event(s) are recorded on their own",
            )
        return Clean(clean, [[items], {}, dict(CLEAN_EMBED)], refusal)
    if task == constants.TASK_FLUSH:
        lane = kwargs.get("lane")
        if (
            set(kwargs) - {"lane"}
            or (lane is not None and lane not in constants.QUEUES)
            or len(args) != 1
            or not isinstance(args[0], str)
            or not NAMESPACE_RE.match(args[0])  # "BAD NS", "": no namespace, no ledger row
        ):
            raise Refused(
                "invalid_task_message", "flush takes one argument, a namespace (and a lane)"
            )
        clean["argsrepr"] = "[namespace]"
        return Clean(
            clean, [[args[0]], {"lane": lane} if "lane" in kwargs else {}, dict(CLEAN_EMBED)]
        )
    raise Refused("unknown_task", "not a memsieve task")

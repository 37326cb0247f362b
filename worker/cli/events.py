"""`memsieve enqueue | write | schema`: putting events in."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from memsieve.cli.common import at_least_one, emit_json, fail, resolve
from memsieve.schemas import events as ev
from memsieve.settings import Settings

# Events per message: 500 measured faster than 100 (fewer messages and flush wake-ups;
# docs/performance.md); a chunk also ends at about CHUNK_BYTES of JSON.
CHUNK = 500
CHUNK_BYTES = 1 << 20
# Exit code when some items were refused and the others sent (2: nothing was sent).
PARTIAL = 3


def _event_from_flags(args: argparse.Namespace) -> dict[str, Any]:
    event: dict[str, Any] = {
        "namespace": args.namespace,
        "kind": args.kind,
        "heading": args.heading,
        "content": args.content,
    }
    # A capture from the command line happened now: sending the same lesson again is a
    # new event (merged by the gate), unless --event-id makes it the same event.
    event["occurred_at"] = args.occurred_at or datetime.now(UTC).isoformat()
    if args.event_id is not None:
        event["event_id"] = args.event_id  # "" is refused by the schema, not made a derived id
    if args.tags:
        event["tags"] = [t for t in args.tags.split(",") if t]
    if args.supersedes:
        event["supersedes"] = args.supersedes
    if args.agent or args.session:
        event["source"] = {"agent": args.agent, "session": args.session}
    return event


def _lines(path: str) -> Iterator[Any]:
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8", errors="surrogateescape")
    with stream:
        for line in stream:
            if line.strip():
                try:
                    obj, raw = json.loads(line.lstrip("\ufeff")), False  # Notepad's BOM
                except (ValueError, RecursionError):
                    obj, raw = None, True  # sent as-is: recorded as malformed_json
                if raw or ev.too_deep(obj):
                    yield line.rstrip("\n")  # as-is; too deep: recorded as invalid_event
                else:  # an array of events, event by event
                    yield from obj if isinstance(obj, list) and obj else [obj]


def _chunks(items: Iterable[Any], size: int, max_bytes: int | None = None) -> Iterator[list[Any]]:
    """Lists of at most `size` items and about `max_bytes` (CHUNK_BYTES) of JSON, one item
    at least."""
    max_bytes = max_bytes or CHUNK_BYTES
    chunk: list[Any] = []
    total = 0
    for item in items:
        n = len(item) if isinstance(item, str) else len(json.dumps(item, default=str))
        if chunk and total + n > max_bytes:
            yield chunk
            chunk, total = [], 0
        chunk.append(item)
        total += n
        if len(chunk) == size:
            yield chunk
            chunk, total = [], 0
    if chunk:
        yield chunk


def check_item(
    n: int, item: Any, key: bytes | None = None, limit: int = 0
) -> tuple[str | None, str | None, str | None]:
    """(its event id, None, its scan stamp) for an item that may be sent; (None, why,
    None) for one holding a secret (the reason names the kind and field, never the value)
    or larger than `limit` bytes of JSON (no message could carry it).

    A valid event's id comes from the event the check already validated (the ledger's
    id for an event with no secret); anything else is sent as-is for the ledger to
    record as refused, unless it holds a secret. A valid clean event is stamped under
    `key` (a stamp key, memsieve.delivery.stamp), so the worker need not scan it again."""
    from memsieve import client, ids
    from memsieve.capture import policy, secrets
    from memsieve.delivery import stamp

    if isinstance(item, dict):
        try:
            event = client.check(item)
        except client.Refused as exc:
            if exc.reason == "secret":
                return None, f"item {n}: {exc.detail}", None
        else:
            return event.resolved_id(), None, stamp.make(key, policy.event_fields(event))
    raw = item if isinstance(item, str) else json.dumps(item, default=str)
    if limit and len(raw) > limit:
        return None, f"item {n}: {len(raw)} bytes, more than a message may carry; not sent", None
    if secrets.find_secrets(raw):
        return None, f"item {n}: a secret in an item that is not a valid event", None
    return ids.event_id_for(item), None, None


class _Sender:
    """Sends checked chunks; settings are resolved (embedded services started) at the
    first chunk that has something to send, so a refused lone event touches nothing.

    A plain `redis://` broker (the embedded one, and most) is written to directly
    (memsieve.delivery.publish: no Celery, kombu or redis-py to import); any other
    goes through the Celery app."""

    def __init__(self, settings: Settings, queue: str) -> None:
        self.settings = settings
        self.queue = queue
        self.app: Any = None
        self.light: Any = None

    def send(self, chunk: list[Any], stamps: list[str | None] | None = None) -> None:
        from memsieve import constants
        from memsieve.delivery import publish, stamp
        from memsieve.ids import describe_payload

        if self.app is None and self.light is None:
            settings = resolve(self.settings, need_db=False)
            if publish.light(settings.broker_url):
                self.light = publish.RedisPublisher(settings.broker_url or "")
            else:
                from memsieve.app import configure

                self.app = configure(settings)
        headers = {stamp.HEADER: stamps} if stamps and any(stamps) else None
        if self.light is not None:
            self.light.send(
                constants.TASK_CAPTURE, [chunk], self.queue, describe_payload(chunk), headers
            )
            return
        self.app.send_task(
            constants.TASK_CAPTURE,
            args=[chunk],
            queue=self.queue,
            argsrepr=describe_payload(chunk),
            headers=headers,
        )

    def close(self) -> None:
        if self.light is not None:
            self.light.close()


class NotSent(ConnectionError):
    """The broker stopped taking chunks; the message says from which item nothing was
    sent."""


def enqueue(
    items: Iterable[Any], settings: Settings, chunk: int = CHUNK
) -> tuple[list[str | None], list[str]]:
    """Check and send `items` chunk by chunk: each chunk goes to the broker as soon as its
    items are checked, so the worker starts on the first while later ones are read.
    An item holding a secret, or too large for a message, is never sent (its chunk-mates
    are): its id is None and the reason is in the second list. Returns (ids in item order,
    refusal reasons). A broker that stops taking chunks raises NotSent, which says from
    which item nothing was sent."""
    from memsieve import constants
    from memsieve.delivery import publish, stamp

    out: list[str | None] = []
    problems: list[str] = []
    # The install's stamp key, if this machine holds the key file: clean events go out
    # stamped, and the worker does not scan them a second time.
    key = stamp.producer_key(settings.key_path)
    limit = settings.max_message_bytes - (64 << 10)  # room for the envelope
    it = iter(items)
    first = list(itertools.islice(it, 2))
    # A file of many events is a backfill: it goes on the backfill lane, behind live
    # captures (constants.QUEUES); one event is a live capture.
    lane = constants.QUEUE if len(first) == 1 else constants.QUEUE_BACKFILL
    sender = _Sender(settings, lane)
    try:
        for part in _chunks(itertools.chain(first, it), max(1, chunk)):
            clean, stamps = [], []
            for item in part:
                eid, problem, made = check_item(len(out) + 1, item, key, limit)
                out.append(eid)
                if problem is None:
                    clean.append(item)
                    stamps.append(made)
                else:
                    problems.append(problem)
            if clean:
                sender.send(clean, stamps)
    except publish.Unavailable as exc:
        sent = len(out) - len(part)
        raise NotSent(f"{exc}; nothing from item {sent + 1} on was sent") from None
    finally:
        sender.close()
    return out, problems


def cmd_enqueue(settings: Settings, args: argparse.Namespace) -> int:
    items: Iterable[Any]
    if args.file:
        items = _lines(args.file)
    elif args.content is not None:
        if not (args.namespace and args.kind and args.heading):
            return fail("enqueue needs --namespace, --kind, --heading and --content (or --file)")
        event = _event_from_flags(args)
        from memsieve import client

        try:
            client.check(event)
        except client.Refused as exc:
            if exc.reason != "secret":  # a secret is reported below, with the others
                # e.g. a tag in a Latin-1 terminal's bytes (lone surrogates), a bad date
                return fail(f"refused, nothing was sent: {exc.detail}")
        items = [event]
    else:
        return fail("enqueue needs --content (with --namespace --kind --heading) or --file PATH|-")
    try:
        ids, problems = enqueue(items, settings, args.chunk)
    except NotSent as exc:
        return fail(str(exc), 1)
    if args.json:
        emit_json(ids)
    elif ids:
        print("\n".join(i or "-" for i in ids))
    if problems:
        sent = sum(1 for i in ids if i is not None)
        if not sent:
            return fail("refused, nothing was sent:\n  " + "\n  ".join(problems))
        # Each item was checked before its chunk was sent: the refused ones never reached
        # the broker; the others did.
        fail(
            f"refused {len(problems)} item(s) holding a secret (not sent; their id is "
            f"'-'); the other {sent} were sent:\n  " + "\n  ".join(problems)
        )
        return PARTIAL
    return 0


def cmd_write(settings: Settings, args: argparse.Namespace) -> int:
    if not (args.namespace and args.kind and args.heading and args.content is not None):
        return fail("write needs --namespace, --kind, --heading and --content")
    settings = resolve(settings)
    from memsieve.flow.pipeline import Pipeline

    pipe = Pipeline(settings)
    pipe.store.migrate()
    out = pipe.write_now(_event_from_flags(args))
    emit_json(out)
    return 0


def cmd_schema(settings: Settings, args: argparse.Namespace) -> int:
    print(json.dumps(ev.CaptureEvent.model_json_schema(), indent=2, sort_keys=True))
    return 0


def _event_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--namespace")
    p.add_argument("--kind", help="retro | correction | failure | pattern")
    p.add_argument("--heading")
    p.add_argument("--content")
    p.add_argument(
        "--event-id", dest="event_id", help="idempotency key (default: derived from content)"
    )
    p.add_argument("--tags", help="comma-separated")
    p.add_argument("--occurred-at", dest="occurred_at", help="ISO 8601 time (default: now)")
    p.add_argument(
        "--supersedes",
        help="with --kind correction: the memory id it replaces (other kinds: ignored)",
    )
    p.add_argument("--agent")
    p.add_argument("--session")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("enqueue", help="send events to the queue; prints their event ids")
    _event_flags(p)
    p.add_argument("--file", help="JSON lines of events ('-' for stdin)")
    p.add_argument("--json", action="store_true", help="print the ids as one JSON array")
    p.add_argument(
        "--chunk", type=at_least_one, default=CHUNK, help=f"events per message [{CHUNK}]"
    )
    p.set_defaults(func=cmd_enqueue)
    p = sub.add_parser(
        "write", help="write one event through the gate now (no queue); prints the decision"
    )
    _event_flags(p)
    p.set_defaults(func=cmd_write)
    p = sub.add_parser("schema", help="print the capture event JSON Schema")
    p.set_defaults(func=cmd_schema)

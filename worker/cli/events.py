"""`memsieve enqueue | write | schema`: putting events in."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from memsieve.cli.common import emit_json, fail, resolve
from memsieve.schemas import events as ev
from memsieve.settings import Settings

CHUNK = 100


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
    if args.event_id:
        event["event_id"] = args.event_id
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
                    yield json.loads(line)
                except ValueError:
                    # Sent as-is: the capture task records it as malformed_json.
                    yield line.rstrip("\n")


def send(items: list[Any], settings: Settings) -> None:
    from memsieve import constants
    from memsieve.app import configure
    from memsieve.delivery.consumer import describe_payload

    app = configure(settings)
    # A file of many events is a backfill: it goes on the backfill lane, behind live
    # captures (constants.QUEUES); one event is a live capture.
    queue = constants.QUEUE_BACKFILL if len(items) > 1 else constants.QUEUE
    for start in range(0, len(items), CHUNK):
        chunk = items[start : start + CHUNK]
        app.send_task(
            constants.TASK_CAPTURE,
            args=[chunk],
            queue=queue,
            argsrepr=describe_payload(chunk),
        )


def secret_items(items: list[Any]) -> list[str]:
    """Why each item holding a secret must not be sent (no value in the text)."""
    from memsieve import client
    from memsieve.capture import secrets

    problems = []
    for n, item in enumerate(items, 1):
        if isinstance(item, dict):
            try:
                client.check(item)
                continue
            except client.Refused as exc:
                if exc.reason == "secret":
                    problems.append(f"item {n}: {exc.detail}")
                    continue
        # Not a valid event: sent as-is for the ledger to record, unless it holds a secret.
        raw = item if isinstance(item, str) else json.dumps(item, default=str)
        if secrets.find_secrets(raw):
            problems.append(f"item {n}: a secret in an item that is not a valid event")
    return problems


def cmd_enqueue(settings: Settings, args: argparse.Namespace) -> int:
    if args.file:
        items = list(_lines(args.file))
    elif args.content is not None:
        if not (args.namespace and args.kind and args.heading):
            return fail("enqueue needs --namespace, --kind, --heading and --content (or --file)")
        items = [_event_from_flags(args)]
        from memsieve import client

        try:
            client.check(items[0])
        except client.Refused as exc:
            if exc.reason != "secret":  # a secret is reported below, with the others
                # e.g. a tag in a Latin-1 terminal's bytes (lone surrogates), a bad date
                return fail(f"refused, nothing was sent: {exc.detail}")
    else:
        return fail("enqueue needs --content (with --namespace --kind --heading) or --file PATH|-")
    problems = secret_items(items)
    if problems:
        # Checked before anything is sent: a secret never reaches the broker's disk.
        return fail("refused, nothing was sent:\n  " + "\n  ".join(problems))
    from memsieve.flow.pipeline import event_id_for

    settings = resolve(settings, need_db=False)
    send(items, settings)
    ids = [event_id_for(i) for i in items]
    if args.json:
        emit_json(ids)
    else:
        print("\n".join(ids))
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
    p.add_argument("--supersedes", help="correction: the memory id it replaces")
    p.add_argument("--agent")
    p.add_argument("--session")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("enqueue", help="send events to the queue; prints their event ids")
    _event_flags(p)
    p.add_argument("--file", help="JSON lines of events ('-' for stdin)")
    p.add_argument("--json", action="store_true", help="print the ids as one JSON array")
    p.set_defaults(func=cmd_enqueue)
    p = sub.add_parser(
        "write", help="write one event through the gate now (no queue); prints the decision"
    )
    _event_flags(p)
    p.set_defaults(func=cmd_write)
    p = sub.add_parser("schema", help="print the capture event JSON Schema")
    p.set_defaults(func=cmd_schema)

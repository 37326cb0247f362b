"""`memsieve backfill PATH`: send old retros through the queue, resumable, with progress.

Items go to the broker in chunks (memsieve.ops.backfill_chunks; at most --window events
in flight), the checkpoint advances after each chunk, and the progress bar counts events
that reached a terminal state in the ledger, not messages sent."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memsieve import errors
from memsieve.cli.common import emit_json, fail, resolve, say
from memsieve.ops import backfill as bf
from memsieve.settings import Settings

POLL = 0.5
STALL_HINT_S = 30.0


def _print_summary(
    title: str, s: bf.Summary, as_json: bool, extra: dict[str, Any] | None = None
) -> None:
    if as_json:
        emit_json({**s.as_dict(), **(extra or {})})
        return
    say(title)
    say("\n".join(s.lines()))


def _argsrepr(chunk: list[bf.Item]) -> str:
    """What Flower shows as the capture task's arguments: counts and ids, never text."""
    ns = sorted(
        {
            i.payload["namespace"]
            for i in chunk
            if isinstance(i.payload, dict) and isinstance(i.payload.get("namespace"), str)
        }
    )
    return f"[{len(chunk)} event(s) ns={','.join(ns)[:80]} first={chunk[0].event_id}]"


def _dry_run(settings: Settings, items: list[bf.Item], args: argparse.Namespace) -> int:
    from memsieve.ops.backfill_dry import dry_run

    done, would = dry_run(settings, items)
    if args.json:
        emit_json({"already_in_ledger": done.as_dict(), "would": would.as_dict()})
        return 0
    say(f"dry run: {len(items)} items, {len(bf.unique(items))} events; nothing was written")
    if done.events:
        say(f"already in the ledger ({done.events}; sending them again changes nothing):")
        say("\n".join(done.lines()[1:]))
    say(f"{'the other ' if done.events else ''}{would.events} events would be:")
    say("\n".join(would.lines()[1:]))
    return 0


class _Counts:
    """The line under the bar: sent and decisions so far (rich renders it on each refresh)."""

    line = ""

    def __rich__(self) -> str:
        return self.line


class _Progress:
    """A rich progress bar over ledger counts, or plain lines when not on a terminal."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.live: Any = None
        self.last_plain = 0.0
        self.counts = _Counts()
        if enabled and sys.stderr.isatty():
            from rich.console import Console, Group
            from rich.live import Live
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeRemainingColumn,
            )

            console = Console(stderr=True)
            self.bar = Progress(
                TextColumn("[bold]backfill"),
                BarColumn(bar_width=None),
                MofNCompleteColumn(),
                TaskProgressColumn(),
                TextColumn("{task.fields[rate]}"),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=console,
                speed_estimate_period=20,
                expand=False,
            )
            self.task = self.bar.add_task("", total=total, rate="")
            self.live = Live(Group(self.bar, self.counts), console=console, refresh_per_second=4)
            self.live.start()

    def note(self, message: str) -> None:
        if self.live is not None:
            self.live.console.print(message)
        else:
            print(message, file=sys.stderr, flush=True)

    def update(self, sent: int, s: bf.Summary) -> None:
        detail = (
            f"sent {sent}  inserted {s.written['inserted']}  superseded {s.written['superseded']}"
            f"  merged {s.written['merged']}  rejected {sum(s.rejected.values())}"
            f"  dead {sum(s.dead.values())}"
        )
        if self.live is not None:
            self.bar.update(self.task, completed=s.terminal)
            speed = self.bar.tasks[self.task].speed
            self.bar.update(self.task, rate=f"{speed:.1f} ev/s" if speed else "")
            self.counts.line = "  " + detail
        elif time.monotonic() - self.last_plain > 5:
            self.last_plain = time.monotonic()
            print(
                f"backfill: done {s.terminal}/{self.total}, {detail}", file=sys.stderr, flush=True
            )

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()


def cmd_backfill(settings: Settings, args: argparse.Namespace) -> int:
    path = Path(args.path)
    try:
        items = bf.read_source(path, args.namespace, args.kind)
    except errors.ConfigError as exc:
        return fail(str(exc))
    if not items:
        return fail(f"no retros found in {path} (looked for *.md, *.markdown, *.jsonl)")
    settings = resolve(settings, need_redis=not args.dry_run)
    from memsieve.store.postgres import Store

    store = Store(settings.database_url or "", max_size=1)
    store.migrate()  # the schema, not data: a dry run on a fresh store needs it too
    store.close()
    if args.dry_run:
        return _dry_run(settings, items, args)
    return _run(settings, path, items, args)


def _run(settings: Settings, path: Path, items: list[bf.Item], args: argparse.Namespace) -> int:
    from memsieve import constants
    from memsieve.app import configure
    from memsieve.delivery import stamp
    from memsieve.ops.backfill_chunks import take_chunk
    from memsieve.store.postgres import Store

    todo = bf.unique(items)
    ids = [i.event_id for i in todo]
    store = Store(settings.database_url or "", max_size=1)
    ck = bf.Checkpoint.load(settings.home, path, args.namespace, ids)
    if args.restart:
        ck.reset()
    app = configure(settings)
    # The install's stamp key, if this machine holds the key file: clean events go out
    # stamped, and the worker does not scan them a second time (memsieve.delivery.stamp).
    key = stamp.producer_key(settings.key_path)
    # What the ledger already knows (an earlier run, or the same events sent by others).
    s = bf.Summary(items=len(items), events=len(ids))
    finished: set[tuple[str, str, str | None]] = set()
    for it, r in bf.ledger_rows(store, todo, terminal_only=True):
        s.add(r["status"], r["decision"], r["reason"])
        finished.add(it.key)
    resumed, sent = ck.sent, ck.sent
    if resumed:
        print(
            f"resuming: {resumed} of {len(ids)} events were sent before; {len(finished)} are done",
            file=sys.stderr,
        )
    progress = _Progress(len(ids), enabled=not args.no_progress and not args.json)
    last_change, hinted = time.monotonic(), False
    # Ctrl-C sets a flag that the loop reads between steps: a KeyboardInterrupt raised in
    # the middle of a pool or driver call could leave the one connection unusable for the
    # summary below (seen under load: the command then hung). A second Ctrl-C stops at once.
    with _interruptible() as stop:
        while not stop.is_set():
            outstanding = [i for i in todo[:sent] if i.key not in finished]
            while sent < len(ids) and len(outstanding) < args.window and not stop.is_set():
                end, chunk, big = take_chunk(store, todo, sent, args.chunk, finished, settings)
                if chunk:
                    payloads = [i.payload for i in chunk]
                    stamps = bf.stamps(chunk, key)
                    app.send_task(
                        constants.TASK_CAPTURE,
                        args=[payloads],
                        queue=constants.QUEUE_BACKFILL,
                        argsrepr=_argsrepr(chunk),
                        headers={stamp.HEADER: stamps} if stamps else None,
                    )
                    outstanding.extend(chunk)
                outstanding.extend(big)  # recorded already, as too large for a message
                sent = end
                ck.advance(ids, sent)
            if sent == len(ids) and (not outstanding or args.no_wait):
                break
            for it, r in bf.ledger_rows(store, outstanding, terminal_only=True):
                s.add(r["status"], r["decision"], r["reason"])
                finished.add(it.key)
                last_change = time.monotonic()
            progress.update(sent, s)
            if not hinted and time.monotonic() - last_change > STALL_HINT_S:
                hinted = True
                progress.note(
                    f"backfill: no event finished in {STALL_HINT_S:.0f}s; is a worker running "
                    "(`memsieve up` or `memsieve worker`)? Ctrl-C now and run again later to resume."
                )
            time.sleep(POLL)  # a SIGINT ends the sleep early only in effect: PEP 475
        interrupted = stop.is_set()
        if not interrupted:
            progress.update(sent, s)
    progress.stop()
    final = bf.summarize(store, items)
    store.close()
    extra = {"sent": sent, "interrupted": interrupted, "checkpoint": str(ck.file)}
    if interrupted:
        _print_summary(
            f"backfill interrupted: {sent} of {len(ids)} events sent; run the same command again "
            "to resume (nothing is sent twice)",
            final,
            args.json,
            extra,
        )
        return 130
    title = f"backfill of {path}: " + ("sent, not waiting" if args.no_wait else "done")
    _print_summary(title, final, args.json, extra)
    return 0


class _Stop:
    """Set by the first SIGINT. A plain attribute: a signal handler must take no lock
    that the interrupted code may hold (threading.Event's would deadlock)."""

    requested = False

    def is_set(self) -> bool:
        return self.requested


@contextmanager
def _interruptible() -> Iterator[_Stop]:
    """A flag set by the first SIGINT (the second raises KeyboardInterrupt as usual); the
    previous handler is back on exit."""
    stop = _Stop()

    def on_sigint(signum: int, frame: Any) -> None:
        if stop.requested:
            signal.default_int_handler(signum, frame)
        stop.requested = True

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "backfill",
        help="send old retros (JSON lines, or Markdown with one lesson per heading) through "
        "the queue; resumable, idempotent",
    )
    p.add_argument("path", help="a .jsonl file, a Markdown file, or a folder of them")
    p.add_argument("--namespace", help="namespace for items that name none")
    p.add_argument("--kind", default="retro", help="kind for items that name none [retro]")
    p.add_argument("--chunk", type=int, default=100, help="events per message, <=1 MiB [100]")
    p.add_argument(
        "--window", type=int, default=2000, help="events sent but not finished, at most [2000]"
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="report what the policy and the gate would do; write nothing",
    )
    p.add_argument(
        "--restart",
        action="store_true",
        help="ignore the checkpoint and send everything again (still idempotent)",
    )
    p.add_argument("--no-wait", action="store_true", help="return once everything is sent")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=cmd_backfill)

"""Freshness during a backfill: live lessons and the backfill's own first memory.

Run from the repo root (a few minutes; starts its own embedded Postgres and Redis):

    . .venv/bin/activate && python -m bench.freshness [--events 5000] [--repeats 3]

Per repeat, on a fresh database, with the worker of `memsieve up` (defaults) and the real
`openai` client against the fake server (base64, --delay-ms per request):
  * `memsieve enqueue --file` sends --events events over --namespaces namespaces (the
    backfill lane);
  * meanwhile, every --probe-every seconds until the backfill has drained, one live lesson
    in another namespace goes on the live queue (as an agent's memsieve.client would send
    it); its latency is enqueue -> memory row written;
  * the backfill's first memory: seconds from the first backfill event in the inbox
    (its first message accepted) to the first backfill memory written, by the database's
    clock; and from the start of the enqueue command.
Prints p50/p99 of the live latencies per run and over all runs, and per run where the
time went: sent -> its capture accepted (waiting for a worker process) and capture ->
memory row (waiting for the flush, and the flush itself).
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace
from typing import Any

import psycopg
from memsieve import constants
from memsieve.app import configure
from memsieve.settings import Settings, default_concurrency

from bench import harness
from bench.openai_path import FakeServer, enqueue_file, finish_enqueue, openai_env


def run(
    svc: harness.Services,
    base_url: str,
    events: list[dict[str, Any]],
    concurrency: int,
    probe_every: float,
    extra: dict[str, str],
) -> dict[str, Any]:
    db = svc.fresh_db()
    env = openai_env(svc, db, base_url, MEMSIEVE_CONCURRENCY=str(concurrency), **extra)
    worker = harness.Worker(env, concurrency)
    live: list[float] = []
    try:
        worker.wait_ready()
        app = configure(replace(Settings.from_env(env).resolved()))
        with psycopg.connect(db, autocommit=True) as conn:
            started = time.monotonic()
            proc = enqueue_file(env, events)
            waiting: dict[str, float] = {}
            sent_at: dict[str, float] = {}
            i = 0
            next_probe = started + probe_every
            while True:
                now = time.monotonic()
                if now >= next_probe:
                    eid = f"live-{i}"
                    app.send_task(
                        constants.TASK_CAPTURE,
                        args=[
                            {
                                "event_id": eid,
                                "namespace": "agent-live",
                                "kind": "correction",
                                "heading": f"Live lesson {i} while a backfill runs",
                                "content": f"Lesson {i}: run migration check {i * 13} before "
                                f"the deploy of cluster {i * 7}.",
                            }
                        ],
                        queue=constants.QUEUE,
                    )
                    waiting[eid] = now
                    sent_at[eid] = time.time()
                    i += 1
                    next_probe = now + probe_every
                if waiting:
                    done = conn.execute(
                        "SELECT event_id FROM memories WHERE event_id = ANY(%s)",
                        (list(waiting),),
                    ).fetchall()
                    for (eid,) in done:
                        live.append(time.monotonic() - waiting.pop(eid))
                row = conn.execute(
                    "SELECT count(*) FILTER (WHERE status <> 'pending'), count(*) FROM events"
                    " WHERE event_id NOT LIKE 'live-%%'"
                ).fetchone()
                if row and row[0] >= len(events) and not waiting:
                    break
                if time.monotonic() - started > 900:
                    raise RuntimeError("backfill not drained after 900 s: " + worker.tail())
                time.sleep(0.005)
            elapsed = time.monotonic() - started
            finish_enqueue(proc)
            first = conn.execute(
                "SELECT extract(epoch FROM (SELECT min(created_at) FROM memories"
                "  WHERE event_id NOT LIKE 'live-%%')"
                " - (SELECT min(received_at) FROM events WHERE event_id NOT LIKE 'live-%%'))"
            ).fetchone()
            # Where each live lesson's time went, by the database's clock: waiting for a
            # worker process to take its capture message, then capture -> memory row.
            parts = conn.execute(
                "SELECT e.event_id, extract(epoch FROM e.received_at),"
                " extract(epoch FROM m.created_at) FROM events e"
                " JOIN memories m ON m.event_id = e.event_id AND m.namespace = e.ns_key"
                " WHERE e.event_id LIKE 'live-%%'"
            ).fetchall()
    finally:
        worker.stop()
    assert first is not None
    to_capture = [float(r[1]) - sent_at[r[0]] for r in parts]
    to_memory = [float(r[2]) - float(r[1]) for r in parts]
    return {
        "to_capture": to_capture,
        "to_memory": to_memory,
        "live": live,
        "first_memory": float(first[0]),
        "elapsed": elapsed,
        "rate": len(events) / elapsed,
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--events", type=int, default=5000)
    ap.add_argument("--namespaces", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--delay-ms", type=float, default=100.0)
    ap.add_argument("--concurrency", type=int, default=default_concurrency("openai"))
    ap.add_argument("--probe-every", type=float, default=0.5)
    ap.add_argument(
        "--variant",
        action="append",
        help="worker settings of one variant, e.g. MEMSIEVE_YIELD_TO_LIVE=false (repeatable;"
        " each repeat runs every variant in turn, for same-run comparisons)",
    )
    args = ap.parse_args()

    events = harness.make_events(args.events, args.namespaces)
    variants = [dict(kv.split("=", 1) for kv in v.split(",") if kv) for v in args.variant or [""]]
    runs: list[list[dict[str, Any]]] = [[] for _ in variants]
    with harness.Services() as svc, FakeServer(args.delay_ms / 1000, "base64") as fake:
        for rep in range(args.repeats):
            for v, extra in enumerate(variants):
                r = run(svc, fake.base_url, events, args.concurrency, args.probe_every, extra)
                runs[v].append(r)
                print(
                    f"[{rep}] {extra or 'defaults'}: {len(r['live'])} live lessons: p50"
                    f" {harness.pct(r['live'], 50):.2f} s, p99 {harness.pct(r['live'], 99):.2f}"
                    f" s, max {max(r['live']):.2f} s; first backfill memory"
                    f" {r['first_memory']:.2f} s after its first event was accepted;"
                    f" backfill {r['rate']:.0f} ev/s",
                    flush=True,
                )
                print(
                    f"    sent -> capture p50 {harness.pct(r['to_capture'], 50):.2f} s,"
                    f" p99 {harness.pct(r['to_capture'], 99):.2f} s; capture -> memory p50"
                    f" {harness.pct(r['to_memory'], 50):.2f} s,"
                    f" p99 {harness.pct(r['to_memory'], 99):.2f} s"
                    f" (load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
                slow = sorted(zip(r["to_capture"], r["to_memory"], strict=True), key=sum)[-3:]
                print(
                    "    slowest (sent -> capture, capture -> memory): "
                    + ", ".join(f"({a:.2f}, {b:.2f})" for a, b in slow),
                    flush=True,
                )
    med = harness.median
    print()
    print(
        f"{args.events} events over {args.namespaces} namespaces via `memsieve enqueue`, live "
        f"lesson every {args.probe_every} s, server delay {args.delay_ms:.0f} ms, "
        f"concurrency {args.concurrency}, {args.repeats} runs"
    )
    for extra, vruns in zip(variants, runs, strict=True):
        live = [x for r in vruns for x in r["live"]]
        p99s = ", ".join(f"{harness.pct(r['live'], 99):.2f}" for r in vruns)
        firsts = ", ".join(f"{r['first_memory']:.2f}" for r in vruns)
        rates = ", ".join(f"{r['rate']:.0f}" for r in vruns)
        print(f"{extra or 'defaults'}:")
        print(
            f"| live lesson during the backfill ({len(live)} lessons) | p50 "
            f"{harness.pct(live, 50):.2f} s | p99 {harness.pct(live, 99):.2f} s | "
            f"per-run p99: {p99s} s |"
        )
        print(
            f"| first backfill memory after its first accepted event | median "
            f"{med([r['first_memory'] for r in vruns]):.2f} s | runs: "
            f"{firsts} s | |"
        )
        print(f"| backfill rate | median {med([r['rate'] for r in vruns]):.0f} ev/s | {rates} |")


if __name__ == "__main__":
    main()

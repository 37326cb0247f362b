"""Backfill throughput, freshness and worker memory, end to end through Celery.

Run from the repo root (a few minutes; starts its own embedded Postgres and Redis):

    . .venv/bin/activate && python -m bench.throughput [--events 10000] [--repeats 3]

Each repeat runs, on a fresh database with real `memsieve worker` processes:
  * batched: the backfill as lists of events per capture message, MEMSIEVE_BATCH_SIZE events
    per flush round (one embedding request and one transaction per namespace batch);
  * naive: one event per capture message and MEMSIEVE_BATCH_SIZE=1, i.e. one task, one
    embedding request and one transaction per event (run on --naive-events of the same
    stream: its rate is steady, and the full 10,000 would take many minutes);
then freshness (enqueue -> recallable) of single events on the idle batched worker, and the
peak resident memory (VmHWM) of every worker process. The embedder is the hashing embedder
(1,536 d) behind a simulated request latency (MEMSIEVE_FAKE_EMBED_LATENCY_MS).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from typing import Any

import psycopg
import redis
from memsieve import constants
from memsieve.app import configure
from memsieve.settings import Settings

from bench import harness
from bench.latency_embedder import REQUESTS_KEY, TEXTS_KEY


def _terminal(conn: psycopg.Connection, n: int) -> bool:
    row = conn.execute(
        "SELECT count(*) FILTER (WHERE status <> 'pending'), count(*) FROM events"
    ).fetchone()
    return row is not None and row[0] >= n and row[1] >= n


def run_backfill(
    svc: harness.Services,
    events: list[dict[str, Any]],
    *,
    per_message: int,
    batch_size: int,
    concurrency: int,
    latency_ms: float,
    fresh_samples: int = 0,
) -> dict[str, Any]:
    db = svc.fresh_db()
    env = svc.env(
        db,
        MEMSIEVE_BATCH_SIZE=str(batch_size),
        MEMSIEVE_FAKE_EMBED_LATENCY_MS=str(latency_ms),
        MEMSIEVE_FAKE_EMBED_COUNT="1",
    )
    worker = harness.Worker(env, concurrency)
    try:
        worker.wait_ready()
        app = configure(replace(Settings.from_env(env).resolved()))
        r = redis.Redis.from_url(svc.redis.url())
        with psycopg.connect(db, autocommit=True) as conn:
            started = time.monotonic()
            for chunk in harness.chunks(events, per_message):
                app.send_task(
                    constants.TASK_CAPTURE,
                    args=[chunk if per_message > 1 else chunk[0]],
                    queue=constants.QUEUE,
                )
            sent = time.monotonic() - started
            while not _terminal(conn, len(events)):
                time.sleep(0.02)
            elapsed = time.monotonic() - started
            statuses = dict(
                conn.execute(
                    "SELECT coalesce(decision, status), count(*) FROM events GROUP BY 1"
                ).fetchall()
            )
            requests = int(r.get(REQUESTS_KEY) or 0)
            texts = int(r.get(TEXTS_KEY) or 0)
            fresh = freshness(conn, app, fresh_samples) if fresh_samples else []
        rss = worker.peak_rss_mb()
        r.close()
    finally:
        worker.stop()
    return {
        "elapsed": elapsed,
        "send": sent,
        "rate": len(events) / elapsed,
        "requests": requests,
        "texts": texts,
        "statuses": statuses,
        "rss": rss,
        "fresh": fresh,
    }


def freshness(conn: psycopg.Connection, app: Any, samples: int) -> list[float]:
    """Seconds from enqueue to the memory being recallable, one event at a time, idle worker."""
    out = []
    for i in range(samples):
        time.sleep(0.3)  # idle between samples
        eid = f"fresh-{i}-{time.monotonic_ns()}"
        event = {
            "event_id": eid,
            "namespace": "bench-fresh",
            "kind": "retro",
            "heading": f"Freshness probe {i} of the write path",
            "content": f"Probe {i}: the deploy of service {i} needed the cache flushed first.",
        }
        started = time.monotonic()
        app.send_task(constants.TASK_CAPTURE, args=[event], queue=constants.QUEUE)
        while (
            conn.execute(
                "SELECT 1 FROM memories WHERE event_id = %s AND deleted_at IS NULL", (eid,)
            ).fetchone()
            is None
        ):
            time.sleep(0.002)
            if time.monotonic() - started > 30:
                raise RuntimeError(f"event {eid} not recallable after 30 s")
        out.append(time.monotonic() - started)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--namespaces", type=int, default=20)
    ap.add_argument("--naive-events", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--latency-ms", type=float, default=100.0)
    ap.add_argument("--concurrency", type=int, default=4, help="worker processes (both paths)")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument(
        "--per-message", type=int, default=500, help="events per capture message (batched)"
    )
    ap.add_argument("--fresh-samples", type=int, default=40)
    ap.add_argument("--skip-naive", action="store_true")
    args = ap.parse_args()

    events = harness.make_events(args.events, args.namespaces)
    batched, naive = [], []
    with harness.Services() as svc:
        for rep in range(args.repeats):
            b = run_backfill(
                svc,
                events,
                per_message=args.per_message,
                batch_size=args.batch_size,
                concurrency=args.concurrency,
                latency_ms=args.latency_ms,
                fresh_samples=args.fresh_samples,
            )
            batched.append(b)
            print(
                f"[{rep}] batched: {b['rate']:.0f} ev/s in {b['elapsed']:.1f}s (send {b['send']:.1f}s), "
                f"{b['requests']} requests, {b['statuses']}, rss {b['rss']}",
                flush=True,
            )
            if b["fresh"]:
                print(
                    f"[{rep}] freshness p50 {harness.pct(b['fresh'], 50) * 1e3:.0f} ms "
                    f"p99 {harness.pct(b['fresh'], 99) * 1e3:.0f} ms",
                    flush=True,
                )
            if not args.skip_naive:
                sample = events[: args.naive_events]
                n = run_backfill(
                    svc,
                    sample,
                    per_message=1,
                    batch_size=1,
                    concurrency=args.concurrency,
                    latency_ms=args.latency_ms,
                )
                naive.append(n)
                print(
                    f"[{rep}] naive: {n['rate']:.1f} ev/s in {n['elapsed']:.1f}s, {n['requests']} requests "
                    f"for {len(sample)} events, {n['statuses']}",
                    flush=True,
                )

    med = harness.median
    b_rate = med([b["rate"] for b in batched])
    print()
    print(
        f"events {args.events} over {args.namespaces} namespaces, latency {args.latency_ms:.0f} ms/request, "
        f"concurrency {args.concurrency}, batch {args.batch_size}, repeats {args.repeats} (medians)"
    )
    print(
        f"| batched backfill | {b_rate:.0f} events/s | {med([b['elapsed'] for b in batched]):.1f} s | "
        f"{med([b['requests'] for b in batched]):.0f} embedding requests |"
    )
    if naive:
        n_rate = med([n["rate"] for n in naive])
        per_event = med([n["requests"] / args.naive_events for n in naive])
        print(
            f"| naive (one task/request/transaction per event, {args.naive_events} events) | {n_rate:.1f} events/s | "
            f"{args.events / n_rate:.0f} s projected for {args.events} | {per_event * args.events:.0f} requests projected |"
        )
        print(f"| speed-up (same run) | {b_rate / n_rate:.1f}x | | |")
    fresh = [f for b in batched for f in b["fresh"]]
    if fresh:
        print(
            f"| freshness, idle worker ({len(fresh)} events) | p50 {harness.pct(fresh, 50) * 1e3:.0f} ms | "
            f"p99 {harness.pct(fresh, 99) * 1e3:.0f} ms | floor: one request = {args.latency_ms:.0f} ms |"
        )
    peaks = [max(b["rss"].values()) for b in batched if b["rss"]]
    totals = [sum(b["rss"].values()) for b in batched if b["rss"]]
    if peaks:
        print(
            f"| worker peak RSS | {med(peaks):.0f} MiB largest process | {med(totals):.0f} MiB all "
            f"{args.concurrency}+1 processes | |"
        )


if __name__ == "__main__":
    main()

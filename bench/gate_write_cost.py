"""CPU and wall time of the gate's write (Store.write_batch) per event, nothing else.

    . .venv/bin/activate && python -m bench.gate_write_cost [--events 3000] [--runs 5]

Events from `harness.make_events` (10 % exact repeats, 10 % rewordings, the rest distinct
facts, over 20 namespaces), embedded once up front by the hashing embedder so that only the
gate and its SQL are timed: inbox rows are inserted and claimed outside the clock, then every
namespace's events are written in batches of 256 through `Store.write_batch` with the default
guards. Each run uses a fresh database. Prints per-run ms/event (wall and this process's CPU)
and the median.

The script only calls `Store.write_batch(namespace, items, model, dims, threshold_for,
guards)`, whose signature the batch gate kept, so the same file measures an older checkout:
run it with that checkout's interpreter from this directory
(`/path/to/old/.venv/bin/python -m bench.gate_write_cost`) and compare the medians.
"""

from __future__ import annotations

import argparse
import statistics
import time

from memsieve.embedders.hashing import HashingEmbedder
from memsieve.gate import guards, thresholds
from memsieve.schemas import memory
from memsieve.store.postgres import InboxEvent, Store

from bench import harness


def one_run(svc: harness.Services, events: list[dict], batch: int) -> tuple[float, float]:
    db = svc.fresh_db()
    store = Store(db)
    store.migrate()
    emb = HashingEmbedder()
    store.bind_embedder(emb.model, emb.dims)
    store.insert_events(
        [
            InboxEvent(
                e["event_id"],
                e["namespace"],
                e["kind"],
                e["heading"],
                e["content"],
                payload_hash=e["event_id"],
            )
            for e in events
        ]
    )
    work = []
    for ns in sorted({e["namespace"] for e in events}):
        pending = store.claim_pending(ns, 100_000)
        vecs = emb.embed([memory.memory_text(p.heading, p.content) for p in pending])
        work.append((ns, list(zip(pending, vecs, strict=True))))
    gs = tuple(guards.default_guards())

    def threshold_for(kind: str) -> float:
        return thresholds.threshold_for(emb.model, kind)

    wall0, cpu0 = time.perf_counter(), time.process_time()
    for ns, items in work:
        for i in range(0, len(items), batch):
            store.write_batch(ns, items[i : i + batch], emb.model, emb.dims, threshold_for, gs)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    store.close()
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=3000)
    ap.add_argument("--namespaces", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    events = harness.make_events(args.events, args.namespaces)
    walls, cpus = [], []
    with harness.Services() as svc:
        for r in range(args.runs):
            wall, cpu = one_run(svc, events, args.batch_size)
            walls.append(wall / args.events * 1e3)
            cpus.append(cpu / args.events * 1e3)
            print(
                f"run {r + 1}: wall {walls[-1]:.3f} ms/event, gate process CPU {cpus[-1]:.3f} ms/event"
            )
    print(
        f"median of {args.runs}: wall {statistics.median(walls):.3f} ms/event, "
        f"CPU {statistics.median(cpus):.3f} ms/event ({args.events} events)"
    )


if __name__ == "__main__":
    main()

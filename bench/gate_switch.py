"""Cost per event of the gate's write on both sides of the cache-size switch (issue 16).

    . .venv/bin/activate && python -m bench.gate_switch [--sizes 4000,20000] [--cache-mb 32]

A namespace of N live memories of 1,536 d (bulk-loaded, clustered like bench.gate_search),
then events written through `Store.write_batch` (the whole gate: search, guards, inserts,
ledger), half near-duplicates of live rows and half new facts, in batches of --batches
events. Each variant starts from the namespace as loaded (the probes' rows and ledger
deleted, rows they hid live again), in a new Store (a new process cache); its first batch
(the cold load of the namespace, when there is one) is written before the clock starts:

  memory   a cache large enough for the namespace (the matrix product, cached)
  auto     a cache of --cache-mb: memory while the namespace fits, the exact SQL search
           per event once it does not (what a worker does now)
  reload   the same small cache without the switch (the behaviour before it: the whole
           namespace loaded for every batch and never kept)

Prints ms per event (wall) per variant, medians of --repeats runs.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np
import psycopg
from memsieve.gate import guards, vectors
from memsieve.store import gate_load
from memsieve.store.postgres import InboxEvent, Store

from bench import gate_search, harness

DIMS = gate_search.DIMS
NS = "ns-00"


def fill(svc: harness.Services, n: int, seed: int) -> tuple[str, np.ndarray]:
    """A fresh database holding one namespace of n live rows."""
    db = svc.fresh_db()
    store = Store(db)
    store.migrate()
    store.bind_embedder("bench", DIMS)
    store.close()
    vecs, _ = gate_search.make_vectors(n, np.random.default_rng(seed))
    gate_search.load(db, vecs, np.zeros(n, dtype=int))
    return db, vecs


def probes(vecs: np.ndarray, count: int, seed: int) -> list[tuple[InboxEvent, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for j in range(count):
        if j % 2:
            i = int(rng.integers(len(vecs)))
            v = vecs[i] + 0.01 * rng.standard_normal(DIMS).astype(np.float32)
        else:
            v = rng.standard_normal(DIMS).astype(np.float32)
        ev = InboxEvent(f"p{j}", NS, "pattern", f"probe {j}", f"probe fact {j}", f"p{j}")
        out.append((ev, vectors.unit(v)))
    return out


RESET = (
    "DELETE FROM memory_conflicts",
    "DELETE FROM memories WHERE event_id LIKE 'p%'",
    "UPDATE memories SET deleted_at = NULL WHERE deleted_at IS NOT NULL",
    "DELETE FROM events",
)


def run(
    db: str, vecs: np.ndarray, variant: str, cache_mb: int, batch: int, count: int, seed: int
) -> float:
    """ms per event of `count` events written in batches of `batch` (after one warm batch)."""
    store = Store(db, cache_mb=cache_mb if variant != "memory" else 1 << 16)
    with psycopg.connect(db, autocommit=True) as conn:
        for sql in RESET:  # the namespace as loaded: N live rows, no probe yet
            conn.execute(sql)
    work = probes(vecs, count + batch, seed)
    store.insert_events([e for e, _ in work])
    vec_of = {e.event_id: v for e, v in work}
    pending = store.claim_pending(NS, len(work))
    items = [(p, vec_of[p.event_id]) for p in pending]
    gs = tuple(guards.default_guards())
    saved = gate_load.fits
    if variant == "reload":
        gate_load.fits = lambda *_a, **_k: True  # type: ignore[assignment]
    try:

        def write(chunk: list[Any]) -> None:
            store.write_batch(NS, chunk, "bench", DIMS, lambda _k: 0.08, gs)

        write(items[:batch])  # the cold load, outside the clock
        started = time.perf_counter()
        rest = items[batch:]
        for i in range(0, len(rest), batch):
            write(rest[i : i + batch])
        elapsed = time.perf_counter() - started
    finally:
        gate_load.fits = saved  # type: ignore[method-assign]
        store.close()
    return elapsed / len(rest) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="4000,20000")
    ap.add_argument("--cache-mb", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-events", type=int, default=512)
    ap.add_argument("--min-events", type=int, default=30)
    ap.add_argument("--batches", default="1,8,32,256")
    args = ap.parse_args()
    budget = vectors.NamespaceCache(args.cache_mb)
    rows_fit = max(n for n in range(0, 10_000_000, 100) if budget.fits(n, DIMS))
    print(f"cache {args.cache_mb} MiB holds ~{rows_fit} live rows of {DIMS} d", flush=True)
    batches = [int(b) for b in args.batches.split(",")]
    with harness.Services() as svc:
        for n in (int(s) for s in args.sizes.split(",")):
            db, vecs = fill(svc, n, seed=7)
            side = "fits" if budget.fits(n, DIMS) else "over the cache"
            for batch in batches:
                count = max(args.min_events, min(args.batch_events, batch * 4))
                for variant in ("memory", "auto", "reload"):
                    if side == "fits" and variant == "reload":
                        continue  # the same as auto while it fits
                    runs = [
                        run(db, vecs, variant, args.cache_mb, batch, count, seed=11 + r)
                        for r in range(args.repeats)
                    ]
                    print(
                        f"{n} rows ({side}), batch {batch}, {variant}: "
                        f"{harness.median(runs):.2f} ms/event"
                        f" (runs {', '.join(f'{x:.2f}' for x in runs)}; load"
                        f" {os.getloadavg()[0]:.1f})",
                        flush=True,
                    )


if __name__ == "__main__":
    main()

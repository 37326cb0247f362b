"""Where the write path's time goes: accept + flush in one process, under cProfile.

    . .venv/bin/activate && python -m bench.profile_write [--events 4000] [--top 25] [--openai base64]

No Celery and no simulated latency: this isolates the CPU cost of capture (validate,
policy, inbox insert) and of flush (claim, embed, cache, gate, write) per event, and the
Postgres time inside them (psycopg waits show up as `wait`/`execute`).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import pstats
import time

from memsieve.flow.pipeline import Pipeline
from memsieve.flow.runtime import one_blas_thread
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from bench import harness, openai_path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=4000)
    ap.add_argument("--namespaces", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument(
        "--no-profile", action="store_true", help="time the stages only (cProfile adds ~50%%)"
    )
    ap.add_argument(
        "--openai",
        choices=["base64", "float"],
        help="the real openai client against the local fake server (no delay) answering in "
        "this format, instead of the hashing embedder",
    )
    args = ap.parse_args()
    one_blas_thread()  # as in a worker process (worker_process_init)
    events = harness.make_events(args.events, args.namespaces)
    with harness.Services() as svc, contextlib.ExitStack() as stack:
        db = svc.fresh_db()
        env = svc.env(db, MEMSIEVE_BATCH_SIZE=str(args.batch_size))
        if args.openai:
            fake = stack.enter_context(openai_path.FakeServer(0.0, args.openai))
            env = openai_path.openai_env(
                svc, db, fake.base_url, MEMSIEVE_BATCH_SIZE=str(args.batch_size)
            )
        settings = Settings.from_env(env).resolved()
        store = Store(db)
        store.migrate()
        pipe = Pipeline(settings, store=store)
        pipe.ensure_bound()
        stages = {}
        prof = cProfile.Profile()
        if not args.no_profile:
            prof.enable()
        t0 = time.perf_counter()
        for chunk in harness.chunks(events, 500):
            pipe.accept(chunk)
        stages["accept"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        for ns in sorted({e["namespace"] for e in events}):
            pipe.flush(ns)
        stages["flush"] = time.perf_counter() - t0
        prof.disable()
        for name, s in stages.items():
            print(f"{name}: {s:.2f} s = {s / args.events * 1e3:.3f} ms/event")
        if not args.no_profile:
            pstats.Stats(prof).sort_stats("cumulative").print_stats(args.top)
            pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)
        store.close()
        pipe.redis.close()


if __name__ == "__main__":
    main()

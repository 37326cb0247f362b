"""The local MiniLM (ONNX Runtime) on its own vs end to end through the worker.

Run from the repo root (a few minutes; starts its own embedded Postgres and Redis):

    . .venv/bin/activate && python -m bench.local_embedder [--events 1000] [--repeats 3]

Prints medians over --repeats, each repeat measuring every variant in turn (same-run
ratios):
  * raw: LocalEmbedder.encode in this process on the events' texts, in batches of
    MEMSIEVE_BATCH_SIZE, with 1 and with 2 ONNX Runtime threads (texts/s);
  * end to end: the same events, all in ONE namespace (the case where one process
    flushes while the other would sit idle), sent as capture messages to a real
    `memsieve worker` (prefork, --concurrency 2, MEMSIEVE_EMBEDDER=local), timed from the
    first send until every event has an outcome in Postgres (events/s); once with
    MEMSIEVE_LOCAL_THREADS=1 (one core per process), once with the default (every core per
    process), and once with the default but MEMSIEVE_EMBED_AHEAD=false (the worker that
    finds the namespace busy does not embed its next batch meanwhile);
  * for the default run, the worker's CPU over the same window (every thread of its
    processes, from /proc): ms per event (the model, Celery, capture, the gate and its
    judge, the writes), and how many of the machine's cores were busy on average. The local
    path is CPU-bound: its ratio to raw is about (the raw run's CPU per text / the worker's
    CPU per event) x (cores busy / 2).
Every text is distinct, so the embedding cache and in-batch dedupe save nothing.

Two streams (--stream):
  * `templated` (the default): `bench.harness.make_events` texts, one template with
    different topics and numbers, so every event has 3 live memories under the threshold
    and the judge reads 3 pairs per event: the judge's worst case;
  * `pairs`: the distinct sentences of the training pair files (both sides of every pair,
    shuffled; those the capture policy admits), agent-memory lessons as written, where an
    event meets a close live memory about as often as the labelled pairs make it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from dataclasses import replace
from typing import Any

import psycopg
from memsieve import constants
from memsieve.app import configure
from memsieve.capture import policy
from memsieve.embedders import local
from memsieve.schemas.events import CaptureEvent
from memsieve.schemas.memory import memory_text
from memsieve.settings import Settings

from bench import harness


def distinct_events(n: int) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for e in harness.make_events(n * 2, namespaces=1, seed=16, prefix="lm"):
        text = memory_text(e["heading"], e["content"])
        if text in seen:
            continue
        seen.add(text)
        out.append(e)
        if len(out) == n:
            break
    return out


# Training splits only (tests/data/README.md): no held-out set feeds a benchmark either.
PAIR_FILES = ["eval_pairs.jsonl", *(f"gate_pairs_train{n}.jsonl" for n in range(4, 9))]


def pair_events(n: int) -> list[dict[str, Any]]:
    """n events whose texts are the training pairs' distinct sentences, in shuffled order,
    each one the capture policy admits (a refused event would skip the model)."""
    data = harness.ROOT / "tests" / "data"
    texts: dict[str, None] = {}
    for name in PAIR_FILES:
        for line in (data / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                pair = json.loads(line)
                texts.update({pair["a"].strip(): None, pair["b"].strip(): None})
    order = list(texts)
    random.Random(16).shuffle(order)
    config, key = policy.PolicyConfig(), b"k" * 32
    out: list[dict[str, Any]] = []
    for i, text in enumerate(order):
        event = {
            "event_id": f"lp-{i}",
            "namespace": "bench-ns-00",
            "kind": "pattern",
            "heading": "Lesson",
            "content": text,
        }
        if policy.evaluate(CaptureEvent.model_validate(event), config, key).admitted:
            out.append(event)
            if len(out) == n:
                return out
    raise SystemExit(f"the training pairs hold {len(out)} admitted sentences, not {n}")


def raw_rate(texts: list[str], threads: int, batch: int) -> float:
    local._runtime = None  # a fresh session with this thread count
    emb = local.LocalEmbedder(threads=threads, cache=Settings.from_env().model_cache)
    emb.encode(texts[:batch])  # warm
    started = time.perf_counter()
    for chunk in harness.chunks(texts, batch):
        emb.encode(chunk)
    return len(texts) / (time.perf_counter() - started)


def e2e_rate(
    svc: harness.Services,
    events: list[dict[str, Any]],
    threads: str,
    batch: int,
    judge: str = "",
    ahead: bool = True,
    cpu: dict[str, float] | None = None,
) -> float:
    """Events per second end to end; `cpu`, if given, gets the worker's CPU over the timed
    window: "ms" per event, "cores" busy on average."""
    db = svc.fresh_db()
    extra = {"MEMSIEVE_EMBEDDER": "local", "MEMSIEVE_BATCH_SIZE": str(batch)}
    if not ahead:
        extra["MEMSIEVE_EMBED_AHEAD"] = "false"
    if judge:
        extra["MEMSIEVE_JUDGE"] = judge
    if threads:
        extra["MEMSIEVE_LOCAL_THREADS"] = threads
    env = svc.env(db, **extra)
    env.pop("MEMSIEVE_HASHING_DIMS", None)
    worker = harness.Worker(env, concurrency=2)
    try:
        worker.wait_ready(timeout=180)
        app = configure(replace(Settings.from_env(env).resolved()))
        with psycopg.connect(db, autocommit=True) as conn:
            before = worker.thread_cpu()
            started = time.monotonic()
            for chunk in harness.chunks(events, batch):
                app.send_task(constants.TASK_CAPTURE, args=[chunk], queue=constants.QUEUE)
            while True:
                row = conn.execute(
                    "SELECT count(*) FILTER (WHERE status <> 'pending'), count(*) FROM events"
                ).fetchone()
                if row is not None and row[0] >= len(events) and row[1] >= len(events):
                    break
                time.sleep(0.05)
            elapsed = time.monotonic() - started
            after = worker.thread_cpu()
    finally:
        worker.stop()
    if cpu is not None:
        used = sum(v - before.get(k, 0.0) for k, v in after.items())
        cpu.update(ms=1000 * used / len(events), cores=used / elapsed)
    return len(events) / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--events", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--judge", default="", help="MEMSIEVE_JUDGE for the end-to-end runs")
    ap.add_argument("--stream", choices=("templated", "pairs"), default="templated")
    args = ap.parse_args()

    events = (pair_events if args.stream == "pairs" else distinct_events)(args.events)
    texts = [memory_text(e["heading"], e["content"]) for e in events]
    local.graph_path(Settings.from_env().model_cache)  # built once, outside every timing
    cpu_runs: list[dict[str, float]] = []
    runs: dict[str, list[float]] = {
        "raw-1": [],
        "raw-2": [],
        "e2e-1": [],
        "e2e-all": [],
        "e2e-no-ahead": [],
    }
    with harness.Services() as svc:
        for rep in range(args.repeats):
            runs["raw-1"].append(raw_rate(texts, 1, args.batch_size))
            runs["raw-2"].append(raw_rate(texts, 2, args.batch_size))
            runs["e2e-1"].append(e2e_rate(svc, events, "1", args.batch_size, args.judge))
            cpu_runs.append({})
            runs["e2e-all"].append(
                e2e_rate(svc, events, "", args.batch_size, args.judge, cpu=cpu_runs[-1])
            )
            runs["e2e-no-ahead"].append(
                e2e_rate(svc, events, "", args.batch_size, args.judge, ahead=False)
            )
            print(
                f"repeat {rep + 1}: "
                + ", ".join(f"{k} {v[-1]:.1f}" for k, v in runs.items())
                + f"  (load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
    med = {k: harness.median(v) for k, v in runs.items()}
    ratios = [e / r for e, r in zip(runs["e2e-all"], runs["raw-2"], strict=True)]
    print(
        f"\n{len(events)} distinct texts ({args.stream}), one namespace, "
        "worker --concurrency 2, medians:"
    )
    print(f"  raw ONNX Runtime, 1 thread        {med['raw-1']:7.1f} texts/s")
    print(f"  raw ONNX Runtime, 2 threads       {med['raw-2']:7.1f} texts/s")
    print(f"  end to end, 1 thread per process  {med['e2e-1']:7.1f} events/s")
    print(f"  end to end, default (all cores)   {med['e2e-all']:7.1f} events/s")
    print(f"  the same, MEMSIEVE_EMBED_AHEAD=false {med['e2e-no-ahead']:5.1f} events/s")
    print(
        f"  end to end / raw 2 threads        {harness.median(ratios):7.0%}"
        f"  (same-run ratios {', '.join(f'{r:.0%}' for r in ratios)})"
    )
    raw_ms = [2000 / r for r in runs["raw-2"]]  # CPU per text of the raw two-thread run
    print(
        f"  default run's worker CPU {harness.median([c['ms'] for c in cpu_runs]):.1f} ms "
        f"per event (raw, 2 threads: <= {harness.median(raw_ms):.1f} ms per text); cores busy "
        f"{harness.median([c['cores'] for c in cpu_runs]):.2f} of 2 (runs "
        + ", ".join(f"{c['cores']:.2f}" for c in cpu_runs)
        + ")"
    )
    off = [e / r for e, r in zip(runs["e2e-no-ahead"], runs["raw-2"], strict=True)]
    print(
        f"  without embedding ahead / raw     {harness.median(off):7.0%}"
        f"  (same-run ratios {', '.join(f'{r:.0%}' for r in off)})"
    )


if __name__ == "__main__":
    main()

"""The headline: events/s through `memsieve enqueue` + the worker of `memsieve up` + the real
`openai` client, against a local OpenAI-compatible server, beside the naive path.

Run from the repo root (a few minutes; starts its own embedded Postgres and Redis):

    . .venv/bin/activate && python -m bench.headline [--events 5000] [--repeats 3]

Per repeat and per answer format (base64, as OpenAI answers; JSON floats, as many
compatible servers answer whatever was asked), on a fresh database:
  * memsieve: `memsieve enqueue --file` of --events events over --namespaces namespaces,
    one `memsieve worker` with `memsieve up`'s defaults (MEMSIEVE_CONCURRENCY processes);
    timed from the start of the enqueue command to the last event in a terminal state;
  * naive: the article's path as a user would write it: per event one embeddings call
    (`client.embeddings.create`, the client's own parsing), one nearest-neighbour query
    (`ORDER BY embedding <=> q LIMIT 1` in the namespace), one insert unless closer than
    0.08; a thread pool of the same concurrency, on --naive-events of the same events.
The server answers every request after --delay-ms (a provider's round trip) from its own
process. Medians over repeats; the ratio is taken within each repeat.
"""

from __future__ import annotations

import argparse
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import openai
import psycopg
from memsieve.settings import default_concurrency
from pgvector.psycopg import register_vector

from bench import harness
from bench.openai_path import API_KEY, FakeServer, enqueue_file, finish_enqueue, openai_env


def run_memsieve(
    svc: harness.Services,
    base_url: str,
    events: list[dict[str, Any]],
    concurrency: int,
    chunk: str = "",
    judge: str = "",
) -> dict[str, Any]:
    db = svc.fresh_db()
    env = openai_env(svc, db, base_url, MEMSIEVE_CONCURRENCY=str(concurrency))
    if judge:
        env["MEMSIEVE_JUDGE"] = judge
    worker = harness.Worker(env, concurrency)
    try:
        worker.wait_ready()
        with psycopg.connect(db, autocommit=True) as conn:
            started = time.monotonic()
            finish_enqueue(enqueue_file(env, events, *(["--chunk", chunk] if chunk else [])))
            sent = time.monotonic() - started
            while not harness.settled(conn, len(events)):
                if time.monotonic() - started > 600:
                    raise RuntimeError("events still pending after 600 s: " + worker.tail())
                time.sleep(0.02)
            elapsed = time.monotonic() - started
            decisions = dict(
                conn.execute(
                    "SELECT coalesce(decision, status), count(*) FROM events GROUP BY 1"
                ).fetchall()
            )
    finally:
        worker.stop()
    return {"rate": len(events) / elapsed, "elapsed": elapsed, "send": sent, "decisions": decisions}


def run_naive(
    svc: harness.Services, base_url: str, events: list[dict[str, Any]], concurrency: int
) -> dict[str, Any]:
    db = svc.fresh_db()
    with psycopg.connect(db, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(
            "CREATE TABLE naive_memories (id bigserial PRIMARY KEY, namespace text NOT NULL,"
            " heading text, content text, embedding vector(1536) NOT NULL)"
        )
    client = openai.OpenAI(api_key=API_KEY, base_url=base_url, max_retries=2)
    local = threading.local()
    conns: list[psycopg.Connection[Any]] = []
    lock = threading.Lock()
    inserted = [0]

    def connection() -> psycopg.Connection[Any]:
        c = getattr(local, "conn", None)
        if c is None:
            c = psycopg.connect(db, autocommit=True)
            register_vector(c)
            local.conn = c
            with lock:
                conns.append(c)
        return c

    def one(e: dict[str, Any]) -> None:
        text = f"{e['heading']}\n{e['content']}"
        vec = np.array(
            client.embeddings.create(input=text, model="text-embedding-3-small").data[0].embedding,
            dtype=np.float32,
        )
        c = connection()
        near = c.execute(
            "SELECT embedding <=> %s FROM naive_memories WHERE namespace = %s"
            " ORDER BY embedding <=> %s LIMIT 1",
            (vec, e["namespace"], vec),
        ).fetchone()
        if near is not None and near[0] < 0.08:
            return
        c.execute(
            "INSERT INTO naive_memories (namespace, heading, content, embedding)"
            " VALUES (%s, %s, %s, %s)",
            (e["namespace"], e["heading"], e["content"], vec),
        )
        with lock:
            inserted[0] += 1

    started = time.monotonic()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, events))
    elapsed = time.monotonic() - started
    for c in conns:
        c.close()
    client.close()
    return {"rate": len(events) / elapsed, "elapsed": elapsed, "inserted": inserted[0]}


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--events", type=int, default=5000)
    ap.add_argument("--namespaces", type=int, default=20)
    ap.add_argument("--naive-events", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--delay-ms", type=float, default=100.0)
    ap.add_argument(
        "--concurrency",
        type=int,
        default=default_concurrency("openai"),
        help="MEMSIEVE_CONCURRENCY's default with the openai embedder",
    )
    ap.add_argument("--formats", default="base64,float")
    ap.add_argument("--skip-naive", action="store_true")
    ap.add_argument(
        "--chunks",
        default="",
        help="comma-separated `enqueue --chunk` values to compare in the same run "
        "(default: the command's own)",
    )
    ap.add_argument(
        "--judges",
        default="",
        help="comma-separated MEMSIEVE_JUDGE values to compare in the same run "
        "(default: the service's own)",
    )
    args = ap.parse_args()

    events = harness.make_events(args.events, args.namespaces)
    chunks = args.chunks.split(",") if args.chunks else [""]
    judges = args.judges.split(",") if args.judges else [""]
    formats = [
        fmt + (f"/chunk {c}" if c else "") + (f"/judge {j}" if j else "")
        for fmt in args.formats.split(",")
        for c in chunks
        for j in judges
    ]
    results: dict[str, list[dict[str, Any]]] = {f: [] for f in formats}
    with harness.Services() as svc:
        for rep in range(args.repeats):
            for label in formats:
                head, _, judge = label.partition("/judge ")
                fmt, _, chunk = head.partition("/chunk ")
                with FakeServer(args.delay_ms / 1000, fmt) as fake:
                    m = run_memsieve(svc, fake.base_url, events, args.concurrency, chunk, judge)
                    n = None
                    if not args.skip_naive:
                        n = run_naive(
                            svc, fake.base_url, events[: args.naive_events], args.concurrency
                        )
                results[label].append({"m": m, "n": n})
                line = (
                    f"[{rep}] {label}: memsieve {m['rate']:.0f} ev/s ({m['elapsed']:.1f} s, "
                    f"enqueue {m['send']:.1f} s) {m['decisions']}"
                )
                if n:
                    line += f"; naive {n['rate']:.1f} ev/s; ratio {m['rate'] / n['rate']:.0f}x"
                print(line, flush=True)

    med = harness.median
    print()
    print(
        f"{args.events} events over {args.namespaces} namespaces, server delay "
        f"{args.delay_ms:.0f} ms, concurrency {args.concurrency}, {args.repeats} repeats (medians)"
    )
    print(
        "| answer format | memsieve (enqueue + up + openai client) | runs | naive | same-run ratio |"
    )
    print("| --- | --- | --- | --- | --- |")
    for fmt, rs in results.items():
        rates = [r["m"]["rate"] for r in rs]
        runs = ", ".join(f"{x:.0f}" for x in rates)
        if rs and rs[0]["n"]:
            naive = med([r["n"]["rate"] for r in rs])
            ratio = med([r["m"]["rate"] / r["n"]["rate"] for r in rs])
            print(
                f"| {fmt} | {med(rates):.0f} events/s | {runs} | {naive:.1f} events/s | {ratio:.0f}x |"
            )
        else:
            print(f"| {fmt} | {med(rates):.0f} events/s | {runs} | | |")


if __name__ == "__main__":
    main()

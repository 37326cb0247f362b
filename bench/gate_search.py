"""The gate's search: namespace-filtered top-3 by cosine distance, latency and recall.

    . .venv/bin/activate && python -m bench.gate_search [--sizes 10000,100000] [--probes 200]

For each size, N live memories of 1,536 dimensions in 20 namespaces (clustered like real
embeddings: topics with paraphrases), and near-duplicate probes (a live vector plus a small
perturbation, the case the gate exists for). Per probe, in one run on one database:

  sql-exact      the query the gate ran per event (btree on namespace, sort by distance)
  hnsw           one HNSW index over all namespaces, pgvector defaults (ef_search 40):
                 the filter applies after the index scan, so a query can return < 3 rows
  hnsw-iter      the same index with hnsw.iterative_scan = relaxed_order, ef_search 100,
                 re-sorted by exact distance
  memory         the namespace's live vectors in worker memory (memsieve.gate.vectors), one
                 matrix-vector product; the load of the namespace is reported apart
  memory-batch   the same, per event when a batch of 256 is scored in one product

Recall@3 is against exact numpy search over the same rows (ties aside, sql-exact is 1.0).
Latencies are medians of --repeats passes over the probes.
"""

from __future__ import annotations

import argparse
import time
import uuid

import numpy as np
import psycopg
from memsieve.gate import vectors
from memsieve.store.postgres import Store
from pgvector.psycopg import register_vector

from bench import harness

DIMS = 1536
NS = 20


def make_vectors(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors in NS namespaces around 256 topics shared by all namespaces (agents of
    one fleet write about the same things), so a probe's graph neighbours are mostly in
    other namespaces: the case where a filter after the index scan comes back short."""
    ns = np.arange(n) % NS
    centers = rng.standard_normal((256, DIMS)).astype(np.float32)
    topic = rng.integers(0, 256, n)
    vecs = centers[topic] + 0.9 * rng.standard_normal((n, DIMS)).astype(np.float32)
    return vectors.unit(vecs), ns


def load(db: str, vecs: np.ndarray, ns: np.ndarray) -> list[str]:
    ids = [str(uuid.uuid4()) for _ in range(len(vecs))]
    with psycopg.connect(db) as conn:
        register_vector(conn)
        with conn.cursor() as cur:
            cur.execute("ALTER TABLE memories DISABLE TRIGGER USER")  # bulk load only
            with cur.copy(
                "COPY memories (id, namespace, kind, heading, content, content_hash, embedding,"
                " embedding_model, embedding_dims, event_id) FROM STDIN (FORMAT BINARY)"
            ) as cp:
                cp.set_types(
                    [
                        "uuid",
                        "text",
                        "text",
                        "text",
                        "text",
                        "text",
                        "vector",
                        "text",
                        "int4",
                        "text",
                    ]
                )
                for i, (v, n) in enumerate(zip(vecs, ns, strict=True)):
                    cp.write_row(
                        (
                            uuid.UUID(ids[i]),
                            f"ns-{n:02d}",
                            "pattern",
                            f"h{i}",
                            f"c{i}",
                            f"hash{i}",
                            v,
                            "bench",
                            DIMS,
                            f"e{i}",
                        )
                    )
            cur.execute("ALTER TABLE memories ENABLE TRIGGER USER")
        conn.execute("ANALYZE memories")
    return ids


SQL_EXACT = (
    "SELECT id::text FROM memories WHERE namespace = %s AND deleted_at IS NULL"
    " AND embedding_model = 'bench' ORDER BY embedding <=> %b LIMIT 3"
)
SQL_HNSW = (
    "SELECT id::text FROM memories WHERE namespace = %s AND deleted_at IS NULL"
    " AND embedding_model = 'bench' ORDER BY embedding::vector(1536) <=> %b LIMIT 3"
)
SQL_HNSW_ITER = (
    "SELECT id FROM (SELECT id::text, embedding::vector(1536) <=> %b AS d FROM memories"
    " WHERE namespace = %s AND deleted_at IS NULL AND embedding_model = 'bench'"
    " ORDER BY embedding::vector(1536) <=> %b LIMIT 3) t ORDER BY d"
)


def time_sql(
    conn: psycopg.Connection,
    sql: str,
    probes: list[tuple[str, np.ndarray]],
    iter_scan: bool = False,
) -> tuple[list[float], list[list[str]]]:
    lat, got = [], []
    with conn.cursor() as cur:
        for ns, q in probes:
            t0 = time.perf_counter()
            if iter_scan:
                cur.execute(sql, (q, ns, q))
            else:
                cur.execute(sql, (ns, q))
            rows = [r[0] for r in cur.fetchall()]
            lat.append(time.perf_counter() - t0)
            got.append(rows)
    return lat, got


def _plan(rows: list[tuple[str]]) -> str:
    import re

    return " / ".join(re.sub(r"'\[[^']*'", "'[...]'", r[0].strip())[:90] for r in rows[:3])


def recall(got: list[list[str]], truth: list[list[str]]) -> float:
    return sum(len(set(g) & set(t)) for g, t in zip(got, truth, strict=True)) / sum(
        len(t) for t in truth
    )


def run_size(
    svc: harness.Services, n: int, n_probes: int, repeats: int, hnsw: bool, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    db = svc.fresh_db()
    Store(db).migrate()
    vecs, ns = make_vectors(n, rng)
    t0 = time.perf_counter()
    ids = load(db, vecs, ns)
    print(
        f"\n== {n} memories ({n // NS} per namespace), loaded in {time.perf_counter() - t0:.1f} s",
        flush=True,
    )

    pick = rng.choice(n, n_probes, replace=False)
    probes = []
    for i in pick:
        q = vectors.unit(vecs[i] + 0.01 * rng.standard_normal(DIMS).astype(np.float32))
        probes.append((f"ns-{ns[i]:02d}", q))
    # Exact truth in numpy (float64).
    by_ns = {k: np.flatnonzero(ns == k) for k in range(NS)}
    truth = []
    for (_name, q), i in zip(probes, pick, strict=True):
        rows = by_ns[int(ns[i])]
        d = 1.0 - vecs[rows].astype(np.float64) @ q.astype(np.float64)
        truth.append([ids[j] for j in rows[np.argsort(d)[:3]]])

    results: dict[str, tuple[float, float, float, str]] = {}
    with psycopg.connect(db, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET jit = off")
        runs = [time_sql(conn, SQL_EXACT, probes) for _ in range(repeats)]
        results["sql-exact"] = summarize(runs, truth)
        plan = conn.execute(
            "EXPLAIN " + SQL_EXACT.replace("%b", "%s"), ("ns-00", probes[0][1])
        ).fetchall()
        print("  sql-exact plan:", _plan(plan))
        if hnsw:
            conn.execute("SET maintenance_work_mem = '2GB'")
            t0 = time.perf_counter()
            conn.execute(
                "CREATE INDEX memories_hnsw ON memories USING hnsw"
                " ((embedding::vector(1536)) vector_cosine_ops) WHERE deleted_at IS NULL"
            )
            build = time.perf_counter() - t0
            conn.execute("ANALYZE memories")
            # The index plan, not the namespace btree + sort the planner prefers.
            conn.execute("SET enable_seqscan = off")
            conn.execute("SET enable_bitmapscan = off")
            conn.execute("SET enable_sort = off")
            plan = conn.execute(
                "EXPLAIN " + SQL_HNSW.replace("%b", "%s"), ("ns-00", probes[0][1])
            ).fetchall()
            print("  hnsw plan:", _plan(plan))
            runs = [time_sql(conn, SQL_HNSW, probes) for _ in range(repeats)]
            short = sum(len(g) < 3 for g in runs[0][1])
            results["hnsw"] = summarize(
                runs, truth, f"build {build:.0f} s; {short}/{len(probes)} probes got < 3 rows"
            )
            conn.execute("SET hnsw.iterative_scan = relaxed_order")
            conn.execute("SET hnsw.ef_search = 100")
            runs = [time_sql(conn, SQL_HNSW_ITER, probes, iter_scan=True) for _ in range(repeats)]
            short = sum(len(g) < 3 for g in runs[0][1])
            results["hnsw-iter"] = summarize(runs, truth, f"{short} probes got < 3 rows")
            conn.execute("DROP INDEX memories_hnsw")

        # In worker memory: load each namespace once (as gate_write does on a cache miss).
        from memsieve.store.gate_load import load_all as load_live

        sets, loads = {}, []
        with conn.cursor() as cur:
            for k in range(NS):
                t0 = time.perf_counter()
                sets[f"ns-{k:02d}"] = load_live(cur, f"ns-{k:02d}", "bench", DIMS)
                loads.append(time.perf_counter() - t0)
        runs = []
        for _ in range(repeats):
            lat, got = [], []
            for name, q in probes:
                live = sets[name]
                t0 = time.perf_counter()
                idx = vectors.top_k(live.matrix @ q, live.alive, 3)
                got.append([live.rows[j].memory_id for j in idx])
                lat.append(time.perf_counter() - t0)
            runs.append((lat, got))
        results["memory"] = summarize(
            runs, truth, f"namespace load p50 {harness.median(loads) * 1e3:.0f} ms (cold cache)"
        )
        # A batch of 256 probes of one namespace scored in one product, per event.
        name = probes[0][0]
        live = sets[name]
        batch = np.stack([q for _, q in probes][:256] * (256 // min(256, len(probes)) or 1))[:256]
        per = []
        for _ in range(repeats * 5):
            t0 = time.perf_counter()
            scores = batch @ live.matrix.T
            for row in scores:
                vectors.top_k(row, live.alive, 3)
            per.append((time.perf_counter() - t0) / len(batch))
        results["memory-batch"] = (
            harness.median(per),
            harness.pct(per, 99),
            float("nan"),
            "per event, batch of 256",
        )

    base = results["sql-exact"][0]
    print("| method | p50 ms | p99 ms | recall@3 | vs sql-exact | note |")
    for name, (p50, p99, rec, note) in results.items():
        rec_s = "-" if rec != rec else f"{rec:.3f}"
        print(
            f"| {name} | {p50 * 1e3:.2f} | {p99 * 1e3:.2f} | {rec_s} | {base / p50:.1f}x | {note} |",
            flush=True,
        )


def summarize(
    runs: list[tuple[list[float], list[list[str]]]], truth: list[list[str]], note: str = ""
) -> tuple[float, float, float, str]:
    p50 = harness.median([harness.pct(lat, 50) for lat, _ in runs])
    p99 = harness.median([harness.pct(lat, 99) for lat, _ in runs])
    return p50, p99, recall(runs[0][1], truth), note


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--probes", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--hnsw-max", type=int, default=100_000, help="skip the HNSW build above this size"
    )
    args = ap.parse_args()
    with harness.Services() as svc:
        for n in (int(s) for s in args.sizes.split(",")):
            run_size(svc, n, args.probes, args.repeats, n <= args.hnsw_max, seed=n)


if __name__ == "__main__":
    main()

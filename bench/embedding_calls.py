"""Embedding API calls for a backfill: batched + cached vs one request per event.

Run from the repo root (about 1-2 minutes; no network, the server is local):

    . .venv/bin/activate && python -m bench.embedding_calls [--events 10000] [--naive-throttled 1000]

Against tests.support.openai_server (real HTTP, real `openai` client, OpenAIEmbedder with its
production retry policy), it measures in one run:
  1. naive: one request per event, no cache;
  2. batched + cached, cold cache (plan_batches + cached_embed);
  3. the same backfill replayed (redelivery): warm cache;
  4. the server throttling every second request with 429 + retry-after-ms, for the batched
     path on the whole backfill and for the naive path on a sample (the naive path pays one
     Retry-After per event, which makes the full run take minutes).
Roughly 10% of the events repeat an earlier text, as a replayed or re-sent capture would.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from memsieve import errors
from memsieve.embedders import cache
from memsieve.embedders.batching import EmbedFailure
from memsieve.embedders.openai import OpenAIEmbedder

from tests.support.openai_server import FakeOpenAI

_TOPICS = ["deploy", "migration", "flaky test", "rate limit", "cache", "lock", "index", "retry"]
_VERBS = ["broke", "stalled", "needed a rollback", "was fixed by", "regressed after", "sped up"]


def make_events(n: int, seed: int = 7) -> list[str]:
    """n capture texts (heading + content), ~10% repeating an earlier one."""
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(n):
        if out and rng.random() < 0.1:
            out.append(rng.choice(out))
            continue
        topic, verb = rng.choice(_TOPICS), rng.choice(_VERBS)
        out.append(
            f"Retro {i}: the {topic} {verb} PR #{rng.randint(1, 9999)}\n\n"
            f"In session {rng.randint(1, 10**6)} the {topic} step {verb} the change on port "
            f"{rng.randint(1024, 65535)}; next time check the {rng.choice(_TOPICS)} first."
        )
    return out


@dataclass
class Row:
    scenario: str
    events: int
    requests: int
    tokens: int
    retries: int
    failed: int
    wall: float


def run(
    name: str,
    fake: FakeOpenAI,
    texts: list[str],
    path: Callable[[OpenAIEmbedder, list[str]], int],
    store: cache.InMemoryEmbeddingCache | None = None,
) -> Row:
    fake.reset_counters()
    emb = OpenAIEmbedder(api_key="sk-test", base_url=fake.base_url, timeout=60.0)
    t0 = time.perf_counter()
    failed = path(emb, texts)
    wall = time.perf_counter() - t0
    return Row(name, len(texts), fake.requests, fake.tokens, emb.stats.retries, failed, wall)


def naive(emb: OpenAIEmbedder, texts: list[str]) -> int:
    failed = 0
    for t in texts:
        try:
            emb.embed([t])
        except errors.MemsieveError:
            failed += 1
    return failed


def batched(store: cache.InMemoryEmbeddingCache) -> Callable[[OpenAIEmbedder, list[str]], int]:
    def go(emb: OpenAIEmbedder, texts: list[str]) -> int:
        out = cache.cached_embed(emb, store, [(cache.text_hash(t), t) for t in texts])
        return sum(isinstance(o, EmbedFailure) for o in out)

    return go


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--naive-throttled", type=int, default=1_000, help="naive sample size")
    ap.add_argument("--retry-after-ms", default="20")
    args = ap.parse_args()
    texts = make_events(args.events)

    rows: list[Row] = []
    with FakeOpenAI() as fake:
        rows.append(run("naive, 1 request/event", fake, texts, naive))
        store = cache.InMemoryEmbeddingCache()
        rows.append(run("batched+cached, cold", fake, texts, batched(store)))
        rows.append(run("batched+cached, replay", fake, texts, batched(store)))
        fake.throttle_every = 2
        fake.throttle_retry_after_ms = args.retry_after_ms
        rows.append(
            run(
                "THROTTLED batched+cached, cold",
                fake,
                texts,
                batched(cache.InMemoryEmbeddingCache()),
            )
        )
        rows.append(run("THROTTLED naive", fake, texts[: args.naive_throttled], naive))

    print(
        f"{args.events} events ({len(set(texts))} distinct texts); throttled = every 2nd "
        f"request answered 429 with retry-after-ms: {args.retry_after_ms}; requests and "
        "tokens are as received by the server, refused requests included\n"
    )
    head = f"{'scenario':32} {'events':>7} {'requests':>9} {'req/1k ev':>9} {'tokens':>10} {'retries':>8} {'failed':>7} {'wall s':>8}"
    print(head)
    print("-" * len(head))
    for r in rows:
        per_k = r.requests * 1000 / r.events if r.events else 0.0
        print(
            f"{r.scenario:32} {r.events:>7} {r.requests:>9} {per_k:>9.1f} {r.tokens:>10} "
            f"{r.retries:>8} {r.failed:>7} {r.wall:>8.2f}"
        )


if __name__ == "__main__":
    main()

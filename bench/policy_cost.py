"""CPU cost of the capture policy per event, of its secret scan alone, and of the policy
for an event whose producer's scan stamp verified (memsieve.delivery.stamp).

    python bench/policy_cost.py [--repeats 5]

Runs, in this process, over tests/data/policy_samples.jsonl and over the headline's
events (`bench.harness.make_events(5000, 20)`): `policy.evaluate` (secret scan of every
field and seam, then the lesson heuristics), the secret scan alone (`_secret_verdict`),
`evaluate(scanned=True)` plus the stamp's verification (what the worker does for an
event `memsieve enqueue` stamped). The per-process caches (short fields, has_lesson)
are emptied before each repeat. Medians of the repeats; a figure, not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from memsieve.capture import policy, rules, secrets
from memsieve.delivery import stamp
from memsieve.schemas.events import CaptureEvent

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "policy_samples.jsonl"


def _samples() -> list[CaptureEvent]:
    events = []
    for line in DATA.read_text("utf-8").splitlines():
        if line.strip():
            fields = {k: v for k, v in json.loads(line).items() if k not in ("expected", "note")}
            fields.setdefault("namespace", "acme")
            events.append(CaptureEvent(**fields))
    return events


def _bench_events() -> list[CaptureEvent]:
    sys.path.insert(0, str(ROOT))
    from bench.harness import make_events

    return [CaptureEvent.model_validate(e) for e in make_events(5000, 20)]


def _median_ms(fn: Callable[[CaptureEvent], object], events: list[CaptureEvent], n: int) -> float:
    runs = []
    for _ in range(n):
        secrets._find_short.cache_clear()
        rules.has_lesson.cache_clear()
        started = time.perf_counter()
        for e in events:
            fn(e)
        runs.append((time.perf_counter() - started) / len(events) * 1000)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    config, key = policy.PolicyConfig(), b"k" * 32
    skey = stamp.stamp_key(key)
    for corpus, events in (("policy_samples", _samples()), ("bench events", _bench_events())):
        # The producer's stamps, made before the clock starts: the worker only verifies.
        made = {id(e): stamp.make(skey, policy.event_fields(e)) for e in events}

        def stamped(e: CaptureEvent, made: dict[int, str | None] = made) -> object:
            ok = stamp.verifies(skey, policy.event_fields(e), made[id(e)])
            return policy.evaluate(e, config, key, scanned=ok)

        for name, fn in (
            ("evaluate (whole policy)", lambda e: policy.evaluate(e, config, key)),
            ("secret scan only", lambda e: policy._secret_verdict(e, key)),
            ("evaluate, stamp verified", stamped),
        ):
            ms = _median_ms(fn, events, args.repeats)
            print(f"{corpus:<15} {name:<26} median {ms:.3f} ms/event over {len(events)} events")


if __name__ == "__main__":
    main()

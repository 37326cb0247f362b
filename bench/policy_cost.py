"""CPU cost of the capture policy per event, and of its secret scan alone.

    python bench/policy_cost.py [--repeats 5]

Runs `policy.evaluate` (secret scan of every field and seam, then the lesson
heuristics) over tests/data/policy_samples.jsonl, in this process; a figure, not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from memsieve.capture import policy
from memsieve.schemas.events import CaptureEvent

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "policy_samples.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    events = []
    for line in DATA.read_text("utf-8").splitlines():
        if line.strip():
            fields = {k: v for k, v in json.loads(line).items() if k not in ("expected", "note")}
            fields.setdefault("namespace", "acme")
            events.append(CaptureEvent(**fields))
    config, key = policy.PolicyConfig(), b"k" * 32
    for name, fn in (
        ("evaluate (whole policy)", lambda e: policy.evaluate(e, config, key)),
        ("secret scan only", lambda e: policy._secret_verdict(e, key)),
    ):
        runs = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            for e in events:
                fn(e)
            runs.append((time.perf_counter() - started) / len(events) * 1000)
        print(f"{name:<26} median {statistics.median(runs):.3f} ms/event over {len(events)} events")


if __name__ == "__main__":
    main()

"""Recall and false refusals of the secret scanner on a held-out corpus, per placement.

    python bench/secrets_heldout.py [tests/data/secrets_heldout.jsonl]

Each line: {"event": {...}, "must_refuse": bool, "placement": ..., "format": ...}. An
event counts as refused when the producer client refuses it for a secret (the same scan
the worker's policy runs); a schema-invalid event is counted apart.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from memsieve import client

DEFAULT = Path(__file__).resolve().parents[1] / "tests" / "data" / "secrets_heldout.jsonl"


def verdict(event: dict) -> str:
    try:
        client.check(event)
    except client.Refused as exc:
        return exc.reason  # secret | invalid
    return "admitted"


def main(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    by: dict[tuple[str, bool], Counter[str]] = defaultdict(Counter)
    missed: list[str] = []
    false: list[str] = []
    for row in rows:
        v = verdict(row["event"])
        by[(row["placement"], row["must_refuse"])][v] += 1
        if row["must_refuse"] and v != "secret":
            missed.append(f"{row['id']} {row['format']} {row['placement']} -> {v}")
        if not row["must_refuse"] and v == "secret":
            false.append(f"{row['id']} {row['format']} {row['placement']}")
    pos = sum(1 for r in rows if r["must_refuse"])
    neg = len(rows) - pos
    print(f"{path.name}: {len(rows)} events, {pos} must be refused, {neg} benign")
    print(f"recall {pos - len(missed)}/{pos}; false refusals {len(false)}/{neg}")
    print(f"{'placement':<24} {'positives refused':>18} {'benign refused':>15}")
    for placement in sorted({p for p, _ in by}):
        p, n = by[(placement, True)], by[(placement, False)]
        print(
            f"{placement:<24} {p['secret']:>8}/{sum(p.values()):<9} "
            f"{n['secret']:>6}/{sum(n.values()):<8}"
        )
    for line in missed:
        print("missed:", line)
    for line in false:
        print("false refusal:", line)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)

"""The scanner on a held-out corpus written by someone else, without sight of the scanner
(tests/data/secrets_heldout.jsonl; measured once, before any tuning on it). The bounds
are that measurement: a change may improve them, never make them worse.

Measured (python bench/secrets_heldout.py): of 301 events that must be refused, 283 are
refused for a secret, 8 fail the schema (also refused: nothing of them is stored), 10
are admitted; of 119 benign events, 56 are refused as secrets and 1 fails the schema.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from memsieve import client

PATH = Path(__file__).resolve().parents[1] / "data" / "secrets_heldout.jsonl"
ROWS = [json.loads(line) for line in PATH.read_text("utf-8").splitlines() if line.strip()]


def _verdict(event: dict) -> str:
    try:
        client.check(event)
    except client.Refused as exc:
        return exc.reason
    return "admitted"


def test_held_out_recall_and_false_refusals_are_no_worse_than_measured() -> None:
    counts = Counter((row["must_refuse"], _verdict(row["event"])) for row in ROWS)
    assert sum(1 for r in ROWS if r["must_refuse"]) == 301 and len(ROWS) == 420
    assert counts[(True, "secret")] >= 283
    assert counts[(True, "admitted")] <= 10  # the secrets that would be stored
    assert counts[(False, "secret")] <= 56  # lessons refused by mistake
    assert counts[(False, "invalid_event")] <= 1

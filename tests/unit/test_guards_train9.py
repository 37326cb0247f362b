"""The hard guards on `tests/data/gate_pairs_train9.jsonl`: 300 pairs a helper with a fresh
context wrote in stop 40 to find the guards' gaps (date, number and id traps beside 100
rewordings that keep the value in another form). Training data: its misses were read and
fixed as classes (hyphenated names in a named slot, spans said from now or by their
place in a month, seasons, days said from today, deadlines as an end, weekday
abbreviations, time zones, quarters in words, ISO dates, periods said softly). The bounds
are today's counts, so a change that lets a trap through or vetoes a rewording again fails.

Left unvetoed, and why: ids made of words outside a named slot ("the namespace for batch
jobs is batch-jobs", "westeurope" / "northeurope": compounds, read softly by the judge),
"double" / "triple", "the morning standup" / "the evening standup" said as adjectives.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from memsieve.gate import guards
from memsieve.gate.decide import Candidate, Incoming

DATA = Path(__file__).resolve().parents[1] / "data" / "gate_pairs_train9.jsonl"
HARD = (guards.numbers_guard, guards.identifiers_guard, guards.dates_guard)


def _vetoed(a: str, b: str) -> bool:
    inc = Incoming("ns", "pattern", "", b, "h-new")
    cand = Candidate("m1", "pattern", "", a, "h-old", 0.01)
    return any(g(inc, cand) for g in HARD)


def test_the_hard_guards_catch_the_traps_and_pass_the_rewordings() -> None:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    missed: Counter[str] = Counter()
    for r in rows:
        if _vetoed(r["a"], r["b"]) != (r["label"] == "different"):
            missed[r["category"]] += 1
    # Start of stop 40: trap_date 23, trap_id 13, trap_number 2 unvetoed; 18 rewordings vetoed.
    assert missed["trap_date"] == 0, missed
    assert missed["trap_id"] <= 7, missed
    assert missed["trap_number"] <= 2, missed
    assert missed["same_values_reworded"] <= 8, missed

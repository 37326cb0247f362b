"""The hard guards on the probe sets a helper with a fresh context wrote to find the guards'
gaps: date, number and id traps beside rewordings that keep the value in another form.
Training data: their misses were read and fixed as classes. The bounds are today's counts,
so a change that lets a trap through or vetoes a rewording again fails.

`gate_pairs_train9.jsonl` (stop 40): hyphenated names in a named slot, spans said from now
or by their place in a month, seasons, days said from today, deadlines as an end, weekday
abbreviations, time zones, quarters in words, ISO dates, periods said softly.

`gate_pairs_train10.jsonl` (stop 41): places in a period ("early" / "mid-December", "the
start" / "the end of the sprint"), counted spans ("their first week" / "first month"), "a
fortnight", ratios said in words ("double" / "triple", "half" / "a quarter"), one-word
cloud regions, a slot's name written exactly (a plural is another bucket), more slot nouns
and "named X", the side of one moment ("before" / "after the earnings call", "during" /
"outside business hours"), business / calendar / fiscal days and years; and as rewordings: "Monday to Friday" / "weekdays", "Saturdays and Sundays",
slash dates, "the twenty-fifth", "six in the morning", "three quarters of an hour", "a
quarter of an hour", "one full day", "a pair of", "the second half of the year",
"January to March", "60-second" / "one-minute".

`gate_pairs_train11.jsonl` (stop 41, a second helper, a broader brief; measured once before
it was read): US zones said in words ("Pacific time" == "PST"), "this morning" (today),
the minute of every hour, the unit a value is kept in ("epoch seconds" / "milliseconds"),
"half a million" / "a million and a half", holidays of more than one word and more
one-word holidays, a one-word name said as one ("the cluster named atlas"), "10,000 ms",
a cron schedule as one identifier, ISO 8601 durations ("P14D"), "the first full week of".

Stop 42 (`memsieve.gate.shorthand`): "7B parameters" / "7 billion", "three nines" /
"99.9%", "half past six in the evening" / "18:30"; "in advance" / "in arrears" and "after
account creation" / "closure" as contrasts.

Left unvetoed, and why: names that are plain words ("team Falcon", "branch develop", "tag
stable"), a zone said by its city ("Berlin time" / "New York time"); read softly
by the judge. Left vetoed: "vCPUs" / "virtual CPUs".
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from memsieve.gate import guards
from memsieve.gate.decide import Candidate, Incoming

DATA = Path(__file__).resolve().parents[1] / "data"
HARD = (guards.numbers_guard, guards.identifiers_guard, guards.dates_guard)


def _vetoed(a: str, b: str) -> bool:
    inc = Incoming("ns", "pattern", "", b, "h-new")
    cand = Candidate("m1", "pattern", "", a, "h-old", 0.01)
    return any(g(inc, cand) for g in HARD)


# (file, {category: most pairs the hard guards get wrong}); in the comments, before the work.
BOUNDS = {
    # stop 40's start: trap_date 23, trap_id 13, trap_number 2 unvetoed; 18 rewordings vetoed
    "gate_pairs_train9.jsonl": {
        "trap_date": 0, "trap_id": 6, "trap_number": 0, "same_values_reworded": 5,
    },
    # stop 41's start: trap_date 14, trap_id 13, trap_number 2; 16 rewordings vetoed
    "gate_pairs_train10.jsonl": {
        "trap_date": 1, "trap_id": 6, "trap_number": 0, "same_values_reworded": 2,
    },
    # stop 41, measured once with the gate before it was read: trap_date 31, trap_id 18,
    # trap_number 1; 14 rewordings vetoed
    "gate_pairs_train11.jsonl": {
        "trap_date": 10, "trap_id": 14, "trap_number": 0, "same_values_reworded": 11,
    },
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_the_hard_guards_catch_the_traps_and_pass_the_rewordings(name: str) -> None:
    rows = [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()]
    missed: Counter[str] = Counter()
    for r in rows:
        if _vetoed(r["a"], r["b"]) != (r["label"] == "different"):
            missed[r["category"]] += 1
    for category, bound in BOUNDS[name].items():
        assert missed[category] <= bound, missed


# `gate_pairs_train12.jsonl` (stop 42): a polarity probe, read by the judge's polarity rule
# (`judge_shapes.polar_flips`: a flip is never the same fact). {category: (flips wanted,
# most pairs read wrong)}; in the comments, before the work.
POLAR_BOUNDS = {
    "antonym_flip": (True, 31),  # 44 unread
    "polarity_kept_reworded": (False, 5),  # 14 read as a flip
    "converse_same": (False, 0),  # 4
}


def test_the_polarity_rule_reads_flips_and_restatements() -> None:
    from memsieve.gate import judge_shapes

    text = (DATA / "gate_pairs_train12.jsonl").read_text(encoding="utf-8")
    wrong: Counter[str] = Counter()
    for r in map(json.loads, text.splitlines()):
        if r["category"] in POLAR_BOUNDS:
            flips = judge_shapes.polar_flips(r["a"], r["b"]) > 0
            wrong[r["category"]] += flips != POLAR_BOUNDS[r["category"]][0]
    for category, (_, bound) in POLAR_BOUNDS.items():
        assert wrong[category] <= bound, wrong

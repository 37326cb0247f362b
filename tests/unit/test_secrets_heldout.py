"""The scanner on the corpus written by someone else, without sight of the scanner
(tests/data/secrets_heldout.jsonl).

It was held out and measured once (283/301 refused for a secret, 8 by the schema, 10
admitted; 56/119 benign lessons refused). Its false refusals were then studied and fixed
as classes (ids, public keys, digests, documentation placeholders, seams), so it is a
tuning set now: these bounds are a regression check, not a result. The result is the
measurement on the next held-out corpus (docs/security.md).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from memsieve import client

PATH = Path(__file__).resolve().parents[1] / "data" / "secrets_heldout.jsonl"


def _rows(name: str) -> list[dict]:
    text = PATH.with_name(name).read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


ROWS = _rows("secrets_heldout.jsonl")


def _verdict(event: dict) -> str:
    try:
        client.check(event)
    except client.Refused as exc:
        return exc.reason
    return "admitted"


def test_held_out_recall_and_false_refusals_are_no_worse_than_measured() -> None:
    counts = Counter((row["must_refuse"], _verdict(row["event"])) for row in ROWS)
    assert sum(1 for r in ROWS if r["must_refuse"]) == 301 and len(ROWS) == 420
    # Since issue 13 `supersedes` must be a memory id (a UUID): the corpus's "mem_01J..."
    # targets refuse their events as invalid (stored no more than a secret refusal is).
    assert counts[(True, "secret")] + counts[(True, "invalid_event")] >= 293
    assert counts[(True, "admitted")] == 0  # the secrets that would be stored
    assert counts[(False, "secret")] == 0  # lessons refused by mistake
    assert counts[(False, "invalid_event")] <= 21


ROWS2 = _rows("secrets_heldout2.jsonl")


def test_second_held_out_corpus_is_no_worse_than_measured() -> None:
    """Written by a third engineer without sight of the scanner or the first corpus, and
    measured once with the scanner that had been tuned on the first: 250/310 refused for a
    secret, 9 by the schema, 51 admitted; 40/221 benign lessons refused (the scanner before
    that tuning: 259, 9, 42 and 90/221). Bounds, not targets: it is not tuned on."""
    counts = Counter((row["must_refuse"], _verdict(row["event"])) for row in ROWS2)
    assert sum(1 for r in ROWS2 if r["must_refuse"]) == 310 and len(ROWS2) == 531
    # Stop 37 (memsieve.capture.nearby and credshapes, built on secrets_train3 and
    # secrets_train4): 270 for a secret, 19 by the schema, 21 admitted (45 before); 37
    # benign refused as secrets (37 before).
    # Stop 39 (benign spans, rounds 2-3 on train5/train6): 270, 19, 21; 21 benign refused.
    assert counts[(True, "secret")] + counts[(True, "invalid_event")] >= 289
    assert counts[(True, "admitted")] <= 21
    assert counts[(False, "secret")] <= 21


ROWS3 = _rows("secrets_train3.jsonl")


def test_third_corpus_a_training_set_is_no_worse_than_tuned() -> None:
    """Written by a helper with a fresh context from format descriptions alone (stop 37),
    then studied: `memsieve.capture.nearby` was built on its misses (69 of 300 admitted
    before, 16 after; 20 of 150 benign refused before, 19 after; stop 39's benign spans,
    `memsieve.capture.benign`: 6, then 4, then 3). A regression check."""
    counts = Counter((row["must_refuse"], _verdict(row["event"])) for row in ROWS3)
    assert sum(1 for r in ROWS3 if r["must_refuse"]) == 300 and len(ROWS3) == 450
    assert counts[(True, "admitted")] <= 15
    assert counts[(False, "secret")] <= 3


ROWS4 = _rows("secrets_train4.jsonl")


def test_fourth_corpus_a_training_set_is_no_worse_than_tuned() -> None:
    """Credentials inside pasted artefacts (code in many languages, configs, logs, dumps,
    chat), written by a helper with a fresh context (stop 37) and then studied: 53 of 260
    admitted before, 15 after; 34 of 140 benign refused before, 23 after; stop 39: 14
    admitted, 5 benign refused (`memsieve.capture.benign`, no code reference in a value
    with a dotted year)."""
    counts = Counter((row["must_refuse"], _verdict(row["event"])) for row in ROWS4)
    assert sum(1 for r in ROWS4 if r["must_refuse"]) == 260 and len(ROWS4) == 400
    assert counts[(True, "admitted")] <= 14
    assert counts[(False, "secret")] <= 5


ROWS5 = _rows("secrets_train5.jsonl")


def test_fifth_corpus_a_training_set_is_no_worse_than_tuned() -> None:
    """244 formats (173 secret, 71 look-alike), written by a helper with a fresh context from
    descriptions alone (stop 39; `supersedes` values that were no memory id set to null, so
    that the schema does not hide the scan), then studied: with stop 39's first round in
    place 28 of 260 admitted and 14 of 140 benign refused; after the second (more languages,
    wrapped values, keys named by their sentence or table row, vendors, published samples)
    11 and 0. 8 more are refused by the schema (a tag over 64 characters)."""
    counts = Counter((row["must_refuse"], _verdict(row["event"])) for row in ROWS5)
    assert sum(1 for r in ROWS5 if r["must_refuse"]) == 260 and len(ROWS5) == 400
    assert counts[(True, "admitted")] <= 11
    assert counts[(False, "secret")] == 0


ROWS6 = _rows("secrets_train6.jsonl")


def test_sixth_corpus_measured_once_then_a_training_set_is_no_worse_than_tuned() -> None:
    """Written with secrets_train5 as its held-out twin (267 formats, other vendors and
    wording), and measured once (stop 39): with the scanner of the session's start, 245 of
    260 refused for a secret, 3 by the schema, 12 admitted, 75 of 140 benign refused; after
    rounds 1-2, 246 / 3 / 11 and 66. Then studied (round 3): 59 of the 66 were random event
    ids (`ce-wkt9l5…`, lowercase ULIDs behind `cap_`), read as tokens. Now 18 admitted (the
    rise is events whose only refusal was that benign id; their own secret was never
    found) and 0 benign refused. A regression check."""
    counts = Counter((row["must_refuse"], _verdict(row["event"])) for row in ROWS6)
    assert sum(1 for r in ROWS6 if r["must_refuse"]) == 260 and len(ROWS6) == 400
    assert counts[(True, "admitted")] <= 18
    assert counts[(False, "secret")] == 0


ROWS7 = _rows("secrets_heldout4.jsonl")


def test_fourth_held_out_corpus_is_no_worse_than_measured() -> None:
    """Written by a helper with a fresh context from descriptions alone (stop 39; sha256
    39962c793a53...; 243 secret formats, 150 benign), never read, measured once with the
    scanner of the session's start (226 of 250 refused, 24 admitted, 46 of 150 benign
    refused) and once at its end (229, 21, 34). Bounds, not targets: it is not tuned on."""
    counts = Counter((row["must_refuse"], _verdict(row["event"])) for row in ROWS7)
    assert sum(1 for r in ROWS7 if r["must_refuse"]) == 250 and len(ROWS7) == 400
    assert counts[(True, "admitted")] <= 21
    assert counts[(False, "secret")] <= 34

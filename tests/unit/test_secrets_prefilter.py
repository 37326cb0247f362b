"""The detect-secrets prefilter (one alternation per flag group) never hides a finding:
on every text of the secret corpora, with and without it, the same findings."""

from __future__ import annotations

import json
from pathlib import Path

from memsieve.capture import patterns

DATA = Path(__file__).resolve().parents[1] / "data"


def texts() -> list[str]:
    out = []
    for name in ("secrets_corpus.jsonl", "secrets_heldout.jsonl", "secrets_heldout2.jsonl"):
        for line in (DATA / name).read_text("utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                event = row.get("event") or {}
                out += [row.get("text") or "", row.get("secret") or ""]
                out += [v for v in event.values() if isinstance(v, str)]
    return [t for t in out if t]


def test_the_prefilter_finds_what_every_pattern_finds() -> None:
    every = patterns._ds_patterns()
    assert all(joined is not None for joined, _ in patterns._ds_groups())
    corpus = texts()
    unfiltered = [list(patterns._ds_group_findings(t, every)) for t in corpus]
    assert sum(map(len, unfiltered)) > 50  # the corpora hold detect-secrets formats
    assert [sorted(patterns._ds_findings(t)) for t in corpus] == [sorted(f) for f in unfiltered]

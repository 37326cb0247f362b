"""Wallet seed phrases found by their words alone (memsieve.capture.seeds)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memsieve.capture import secrets, seeds

PHRASE = "axis amazing atom act among angle address accident avocado album agent ability"
DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize(
    "text",
    [
        f"Restore the test wallet with: {PHRASE}. Then move the funds.",
        "\n".join(f"{n}. {w}" for n, w in enumerate(PHRASE.split(), 1)),
        ", ".join(PHRASE.split()),
        # Spanish list: "ábaco abdomen abeja ..." (accented words are on it too).
        "semilla: ábaco abdomen abeja abierto abogado abono aborto abrazo abrir abuelo abuso acabar",
    ],
)
def test_a_seed_phrase_is_found_without_its_name(text: str) -> None:
    found = secrets.find_secrets(text)
    assert [f.kind for f in found] == ["recovery_secret"], found
    assert len(text[found[0].start : found[0].end].split()) >= 12


def test_eleven_words_or_a_sentence_are_not_a_phrase() -> None:
    eleven = " ".join(PHRASE.split()[:11])
    assert list(seeds.findings(f"Try {eleven}.")) == []
    # Broken by a word of no list ("the"): two runs of six.
    words = PHRASE.split()
    assert list(seeds.findings(" ".join(words[:6] + ["the"] + words[6:]))) == []
    assert list(seeds.findings(PHRASE.upper())) == []  # the lists are lower case


def test_no_sentence_of_the_gate_pair_sets_reads_as_a_phrase() -> None:
    texts = [
        side
        for path in sorted(DATA.glob("gate_pairs_*.jsonl"))
        for line in path.read_text("utf-8").splitlines()
        if line.strip()
        for side in (json.loads(line)["a"], json.loads(line)["b"])
    ]
    assert len(texts) > 10_000
    assert [t for t in texts if list(seeds.findings(t))] == []

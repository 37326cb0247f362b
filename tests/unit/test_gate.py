"""The pure gate: merge only byte-identical, supersede the closest unvetoed candidate, else insert."""

from __future__ import annotations

from memsieve.gate.decide import Candidate, Incoming, Veto, decide
from memsieve.schemas.memory import content_hash


def inc(text: str, target: str | None = None, kind: str = "retro") -> Incoming:
    return Incoming("ns", kind, "h", text, content_hash("h", text), target)


def cand(mid: str, text: str, distance: float) -> Candidate:
    return Candidate(mid, "retro", "h", text, content_hash("h", text), distance)


def test_no_candidates_inserts() -> None:
    d = decide(inc("a"), [], 0.1)
    assert (d.action, d.target, d.reason) == ("insert", None, "no live memory in namespace")


def test_byte_identical_merges_whatever_the_distance() -> None:
    d = decide(inc("same"), [cand("m1", "other", 0.01), cand("m2", "same", 0.5)], 0.1)
    assert (d.action, d.target, d.distance) == ("merge", "m2", 0.0)


def test_whitespace_case_and_unicode_form_variants_do_not_merge() -> None:
    nfc, nfd = "caf\u00e9 uses port 80", "cafe\u0301 uses port 80"
    for variant in (nfd, nfc.upper(), nfc + " ", nfc.replace(" ", "  ")):
        d = decide(inc(variant), [cand("m1", nfc, 0.01)], 0.1)
        assert d.action == "supersede", variant  # kept as a new row, never merged away


def test_closest_candidate_within_threshold_is_superseded() -> None:
    d = decide(inc("x"), [cand("far", "a", 0.09), cand("near", "b", 0.02)], 0.1)
    assert (d.action, d.target, d.distance) == ("supersede", "near", 0.02)
    assert [c.memory_id for c in d.considered] == ["near"]


def test_threshold_is_strict() -> None:
    assert decide(inc("x"), [cand("m", "a", 0.1)], 0.1).action == "insert"
    assert decide(inc("x"), [cand("m", "a", 0.0999)], 0.1).action == "supersede"


def test_a_veto_falls_through_to_the_next_candidate_then_insert() -> None:
    def veto_near(incoming: Incoming, candidate: Candidate) -> list[Veto]:
        return [Veto("numbers", "260 vs 480")] if candidate.memory_id == "near" else []

    d = decide(inc("x"), [cand("near", "a", 0.01), cand("next", "b", 0.05)], 0.1, [veto_near])
    assert (d.action, d.target) == ("supersede", "next")
    d = decide(inc("x"), [cand("near", "a", 0.01)], 0.1, [veto_near])
    assert d.action == "insert"
    assert d.reason == "close candidate kept: numbers: 260 vs 480"
    assert d.considered[0].vetoes == [Veto("numbers", "260 vs 480")]


def test_explicit_correction_target_overrides_distance_and_guards() -> None:
    def veto_all(incoming: Incoming, candidate: Candidate) -> list[Veto]:
        return [Veto("g", "d")]

    d = decide(inc("x", target="old", kind="correction"), [cand("old", "a", 0.7)], 0.1, [veto_all])
    assert (d.action, d.target) == ("supersede", "old")

"""The prefilters (memsieve.capture.fastre: literals read from each regex, lower-case
twins of case-insensitive regexes) never hide a finding: on every text of the secret
corpora, with and without them, the same findings and the same matches."""

from __future__ import annotations

import json
import re
from pathlib import Path

from memsieve.capture import fastre, patterns, prose, rules

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
    every = patterns._ds_ordered()
    corpus = texts()
    unfiltered = [list(patterns._ds_group_findings(t, every)) for t in corpus]
    assert sum(map(len, unfiltered)) > 50  # the corpora hold detect-secrets formats
    first = len(patterns._PATTERNS)

    def filtered(t: str) -> list[patterns.SecretFinding]:
        low = fastre.lowered(t)
        hits = [i for i in patterns._formats().candidates(t, low) if i >= first]
        return sorted(patterns._ds_findings(t, low, hits))

    assert [filtered(t) for t in corpus] == [sorted(f) for f in unfiltered]


def _regexes() -> list[re.Pattern[str]]:
    found = [p.regex for p in patterns._PATTERNS] + [p.regex for p in patterns._ds_ordered()]
    for module in (prose, rules):
        found += [v for v in vars(module).values() if isinstance(v, re.Pattern)]
    return found


def test_scans_match_what_their_regex_matches() -> None:
    corpus = texts() + [t.upper() for t in texts()[:500]] + ["ſecret kelvin \u212aey", "İD"]
    for rx in _regexes():
        scan = fastre.Scan(rx)
        for t in corpus:
            low = fastre.lowered(t)
            want = [m.span() for m in rx.finditer(t)]
            assert [m.span() for m in scan.finditer(t, low)] == want, rx.pattern[:60]
            assert scan.search(t, low) == (rx.search(t) is not None)
            assert scan.match(t, low) == (rx.match(t) is not None)


def test_twins_are_built_for_the_case_insensitive_regexes() -> None:
    # The shortcut is only worth having where the text is read case-insensitively.
    assert fastre.Scan(rules._LESSON_RE).twin is not None
    assert fastre.Scan(prose._PROSE_AFTER).twin is not None
    # An upper-case literal read case-insensitively has no twin: the lower-cased text
    # never holds it.
    assert fastre.Scan(re.compile("(?i)Key=")).twin is None
    assert fastre.Scan(re.compile("(?i:key)=[A-Z]+")).twin is None
    assert fastre.Scan(re.compile("(?i:key)=[A-Za-z]+")).twin is not None


def test_needs_are_literals_every_match_holds() -> None:
    scan = fastre.Scan(re.compile(r"(?<![\w])(?:ghp|gho)_[A-Za-z0-9]{36}"))
    assert scan.needs[0] == (frozenset({"ghp_", "gho_"}), False)
    # Case-insensitive literals are read on the lower-cased text, for ASCII text only.
    scan = fastre.Scan(re.compile(r"(?i)bearer\s+\S+"))
    assert scan.needs[0] == (frozenset({"bearer"}), True)
    assert scan.possible("BEARER x", "bearer x")
    assert scan.possible("beareſ x", None)  # not ASCII: no shortcut on case
    assert not scan.possible("no token here", "no token here")


def test_a_case_insensitive_part_inside_a_case_sensitive_group_is_read_on_the_lower_case() -> None:
    # `Qabc` would be a case-sensitive literal, and "QABc" (which matches) does not hold it.
    rx = re.compile(r"(?:Q(?:Z|(?i:ab)))c")
    scan = fastre.Scan(rx)
    assert scan.needs[0] == (frozenset({"qzc", "qabc"}), True)
    assert [m.span() for m in scan.finditer("QABc", "qabc")] == [(0, 4)]


def test_candidates_are_the_scans_whose_literals_the_text_holds() -> None:
    """The one-pass lookup (an Aho-Corasick automaton over the gate literals) picks what
    testing every scan's literals one by one picks: the same scans on ASCII text, and
    never fewer on other text (where the lower-case literals cannot be read)."""
    corpus = texts()
    corpus += [t.upper() for t in corpus[:300]] + [t + " ſ ß" for t in corpus[:300]]
    for pf in (patterns._formats(), prose._SCANS):

        def one_by_one(text: str, low: str | None, pf: fastre.Prefilter = pf) -> list[int]:
            return [
                i
                for i, scan in enumerate(pf.scans)
                if scan.possible(text, low)
                and (not pf.extra[i] or any(w in text for w in pf.extra[i]))
            ]

        for t in corpus:
            low = fastre.lowered(t)
            got, want = pf.candidates(t, low), one_by_one(t, low)
            if low is not None:
                assert got == want, t
            else:
                assert set(want) <= set(got), t

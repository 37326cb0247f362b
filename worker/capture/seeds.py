"""Wallet seed phrases written without their name. Pure.

A BIP-39 mnemonic is 12 to 24 words of a fixed list of 2,048; with them anyone holds the
wallet. `memsieve.capture.prose` finds one after "seed phrase" / "recovery words"; this
finds one by its words alone ("restore with: axis amazing atom act among angle ..."). The
word lists come from the `mnemonic` package (Trezor's reference implementation of
BIP-39), in the languages whose lists are written in Latin letters.

A run of twelve words all on one list does not happen in prose: the lists hold no "the",
"a", "is", "to", "of" or "and" (0 of the PAWS-Wiki and gate-pair sentences match).
Numbering ("1. axis 2. amazing"), commas and line breaks between the words are allowed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from memsieve.capture.shapes import SecretFinding

MIN_WORDS = 12
_LANGUAGES = ("english", "spanish", "french", "italian", "portuguese", "czech")
_WORD = re.compile(r"[^\W\d_]+")
# What may stand between two words of one phrase: spaces, a comma, a line break, a
# number ("1." "2)" "03 -"), a bullet or quotes.
_GAP = re.compile(r"[\s,;\"'`*\-–•]*(?:\d{1,2}[.):]?[\s\-–]*)?")


@lru_cache(maxsize=1)
def _lists() -> tuple[frozenset[str], ...]:
    from mnemonic import Mnemonic

    # Some lists are stored decomposed (Spanish "ábaco" as a + combining accent): lessons
    # are composed (NFC).
    return tuple(
        frozenset(unicodedata.normalize("NFC", w) for w in Mnemonic(lang).wordlist)
        for lang in _LANGUAGES
    )


@lru_cache(maxsize=1)
def _any_list() -> frozenset[str]:
    return frozenset().union(*_lists())


def findings(text: str) -> Iterable[SecretFinding]:
    """Runs of `MIN_WORDS` or more words of one BIP-39 list, with only gaps between them."""
    words = [m for m in _WORD.finditer(text) if m.group(0).islower()]
    if len(words) < MIN_WORDS:
        return
    known = _any_list()
    # One pass with every list at once: prose breaks a run within a few words.
    for run in _runs(text, words, known):
        for wordlist in _lists():
            yield from _runs_as_findings(text, run, wordlist)


def _runs(
    text: str, words: list[re.Match[str]], wordlist: frozenset[str]
) -> Iterable[list[re.Match[str]]]:
    """Maximal runs of at least `MIN_WORDS` words of `wordlist`, only gaps between them."""
    run: list[re.Match[str]] = []
    for m in words:
        if m.group(0) not in wordlist:
            if len(run) >= MIN_WORDS:
                yield run
            run = []
            continue
        if run and _GAP.fullmatch(text, run[-1].end(), m.start()) is None:
            if len(run) >= MIN_WORDS:
                yield run
            run = []
        run.append(m)
    if len(run) >= MIN_WORDS:
        yield run


def _runs_as_findings(
    text: str, run: list[re.Match[str]], wordlist: frozenset[str]
) -> Iterable[SecretFinding]:
    for sub in _runs(text, run, wordlist):
        yield SecretFinding(sub[0].start(), sub[-1].end(), "recovery_secret")

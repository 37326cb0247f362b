"""Initialisms and what they stand for ("PR" / "pull request", "SLA" / "service level
agreement"): a word of one text whose letters are the initials of a run of words of the
other. The judge's alignment counts them as one word (`memsieve.gate.judge_align.align`):
the model's vectors of "pr" and of "pull request" are far apart, and without this a
rewording that spells an initialism out reads as two unaligned words.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

# Letters of an initialism: "PR" to "SLO", "MTTR"; longer ones are words more often.
MIN_LETTERS, MAX_LETTERS = 2, 4


def _letters(word: str) -> str:
    w = word.lower()
    if w.endswith("s") and len(w) > MIN_LETTERS:  # "PRs" / "pull requests"
        w = w[:-1]
    return w if MIN_LETTERS <= len(w) <= MAX_LETTERS and w.isalpha() else ""


@lru_cache(maxsize=8192)
def _shape(words: tuple[str, ...]) -> tuple[frozenset[str], str, tuple[tuple[int, str], ...]]:
    """Per text, once (a text meets several candidates): its words in lower case, the first
    letter of each word of two letters or more ("\\0" for the others), and its possible
    initialisms with their positions."""
    lower = frozenset(w.lower() for w in words)
    initials = "".join(w[0].lower() if len(w) > 1 and w.isalpha() else "\0" for w in words)
    shorts = tuple((i, x) for i, w in enumerate(words) if (x := _letters(w)))
    return lower, initials, shorts


def spelled_out(short: tuple[str, ...], long: tuple[str, ...]) -> Iterator[tuple[int, range]]:
    """(i, span): word i of `short` is an initialism of the words `long[span]` (each a word
    of two letters at least, all of letters), and `long` does not have the word itself."""
    shorts = _shape(short)[2]
    if not shorts:
        return
    lower, initials, _ = _shape(long)
    for i, letters in shorts:
        j = initials.find(letters)
        if j >= 0 and short[i].lower() not in lower:
            yield i, range(j, j + len(letters))

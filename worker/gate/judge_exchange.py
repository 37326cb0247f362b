"""Two words that trade places and nothing else changes ("staging runs 2 replicas and
production 6" / "... 6 ... 2"; "the web tier may call the API tier, not the API tier the web
tier" / the mirror): which value belongs to which thing, or who does what to whom, was
reversed. The same words, each as often, in the same frame; the word-order guard cannot see
it where every word appears twice. A hard veto of the pair classifier
(`memsieve.gate.judge_features.split_vetoes`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from memsieve.gate.judge_align import word_key

_TOKEN = re.compile(r"[a-z0-9]+(?:[.:/%][a-z0-9%]+)*%?|[,&/]")
# What may stand between two items of a list ("Redis and Postgres" / "Postgres and Redis").
_LIST_JOINERS = frozenset({",", "&", "/", "and", "or", "nor", "plus"})
_ARTICLES = frozenset({"the", "a", "an"})


def exchanged(text_a: str, text_b: str) -> tuple[str, str] | None:
    """Two words that trade places, nothing else changed ("staging runs 2, prod 6" / "... 6
    ... 2"): who does what to whom, or which value is whose, was reversed. Not a list
    reordered ("Redis and Postgres" / "Postgres and Redis")."""
    (ta, keys, ka), (_, _, kb) = _exchange_keys(text_a), _exchange_keys(text_b)
    if len(ka) != len(kb) or ka == kb:
        return None
    diffs = {(x, y) for x, y in zip(ka, kb, strict=True) if x != y}
    if len(diffs) != 2:
        return None
    (x, y), (u, v) = sorted(diffs)
    if (u, v) != (y, x):
        return None
    values = any(c.isdigit() for c in x + y)
    for i in (i for i, k in enumerate(keys) if k == x):
        for j in (j for j, k in enumerate(keys) if k == y):
            if _listed(ta[min(i, j) + 1 : max(i, j)], values):
                return None
    return x, y


@lru_cache(maxsize=4096)
def _exchange_keys(text: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """A text's tokens, their keys, and the keys without the list marks (once per text)."""
    tokens = tuple(_TOKEN.findall(text.lower()))
    keys = tuple(word_key(t) if t.isalpha() else t for t in tokens)
    return tokens, keys, tuple(k for t, k in zip(tokens, keys, strict=True) if t not in ",&/")


def _listed(between: tuple[str, ...], values: bool) -> bool:
    """Two words this far apart are items of one list: only joiners and articles between
    them ("NBA or the NCAA"; "from A to B" is not: a role word), or items of a longer list
    ("Italy, France, Germany and Canada"; of values, only values between them)."""
    if all(t in _LIST_JOINERS or t in _ARTICLES for t in between):
        return True
    if values:  # "the 14th, 16th and 117th": other values between, nothing else
        return all(t in _LIST_JOINERS or any(c.isdigit() for c in t) for t in between)
    if not any(t in _LIST_JOINERS for t in between):
        return False
    items = " ".join(t if t not in _LIST_JOINERS else "|" for t in between).split("|")
    return all(len(item.split()) <= 2 for item in items)

"""Shapes of a close pair that the pair classifier reads from the words alone: a word swapped
in one slot, roles exchanged among the same words, sibling names, swapped values.

Pure and cheap (no vectors); `memsieve.gate.judge_features` turns them into features and
hard vetoes.
"""

from __future__ import annotations

import re

from memsieve.gate.judge_align import word_key


def substitutions(
    a: tuple[str, ...], b: tuple[str, ...], content: frozenset[str]
) -> list[tuple[str, str]]:
    """Pairs (word only in a, word only in b) standing in the same slot: the same word just
    before or just after both ("the billing service" / "the search service"). A renamed
    entity, an antonym or a new value; a synonym too, which the alignment then tells apart."""
    ka = [word_key(w) for w in a]
    kb = [word_key(w) for w in b]
    only_a = {k for k in ka if k in content} - set(kb)
    only_b = {k for k in kb if k in content} - set(ka)
    if not only_a or not only_b:
        return []

    def slots(keys: list[str], only: set[str]) -> dict[str, set[tuple[str, str]]]:
        out: dict[str, set[tuple[str, str]]] = {}
        for i, k in enumerate(keys):
            if k in only:
                if i > 0 and keys[i - 1] not in only:
                    out.setdefault(k, set()).add(("<", keys[i - 1]))
                if i + 1 < len(keys) and keys[i + 1] not in only:
                    out.setdefault(k, set()).add((">", keys[i + 1]))
        return out

    sa, sb = slots(ka, only_a), slots(kb, only_b)
    return [(x, y) for x in sorted(sa) for y in sorted(sb) if sa[x] & sb[y]]


# New adjacent pairs of content words that make a reordering of the same words a swap of
# roles rather than a moved clause (which breaks one junction).
SWAP_MIN_NEW_BIGRAMS = 2


def swapped_in_same_bag(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """The same content words, each as often, in another order that breaks at least two
    adjacencies: roles exchanged even where every word appears twice ("rebase A onto B, not
    B onto A" / "rebase B onto A, not A onto B"), which the swapped-roles guard (words used
    once) cannot see."""
    from collections import Counter

    ka, kb = [word_key(w) for w in a], [word_key(w) for w in b]
    if ka == kb or Counter(ka) != Counter(kb):
        return False
    big_a = set(zip(ka, ka[1:], strict=False))
    return sum(p not in big_a for p in zip(kb, kb[1:], strict=False)) >= SWAP_MIN_NEW_BIGRAMS


def bigrams(words: tuple[str, ...]) -> set[tuple[str, str]]:
    keys = [word_key(w) for w in words]
    return set(zip(keys, keys[1:], strict=False))


_SWAPPED = re.compile(r"'([^']*)' and '([^']*)' change places")


def values_swapped(detail: str) -> bool:
    """The swapped roles are two values with digits (numbers, ids), not two words."""
    m = _SWAPPED.search(detail)
    return bool(m) and all(any(c.isdigit() for c in g) for g in m.groups())  # type: ignore[union-attr]


_COMPOUND = re.compile(r"[A-Za-z0-9_.]+(?:-[A-Za-z0-9_.]+)+")


def sibling_names(text_a: str, text_b: str) -> bool:
    """Each text has a hyphenated name the other lacks, and the two are of one family: they
    share a part and each has a part the other lacks ("web-frontend" / "web-backend",
    "acme-prod-uploads" / "acme-staging-uploads", "test-unit" / "test-integration"). Those
    are identifiers, and a changed identifier is never the same fact; a prose compound is
    reworded into other words ("hand-edit" / "edit-by-hand": no part replaced)."""
    ca = {m.lower().strip(".") for m in _COMPOUND.findall(text_a)}
    cb = {m.lower().strip(".") for m in _COMPOUND.findall(text_b)}
    parts_a = [set(c.split("-")) for c in ca - cb]
    parts_b = [set(c.split("-")) for c in cb - ca]
    return any(x & y and x - y and y - x for x in parts_a for y in parts_b)

"""Shapes of a close pair that the pair classifier reads from the words alone: a word swapped
in one slot, roles exchanged among the same words, sibling names, swapped values.

Pure and cheap (no vectors); `memsieve.gate.judge_features` turns them into features and
hard vetoes.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memsieve.gate import judge_converse
from memsieve.gate.judge_align import word_key, word_keys


def substitutions(
    a: tuple[str, ...], b: tuple[str, ...], content: frozenset[str]
) -> list[tuple[str, str]]:
    """Pairs (word only in a, word only in b) standing in the same slot: the same word just
    before or just after both ("the billing service" / "the search service"). A renamed
    entity, an antonym or a new value; a synonym too, which the alignment then tells apart."""
    ka, kb = word_keys(a), word_keys(b)
    only_a = {k for k in ka if k in content} - set(kb)
    only_b = {k for k in kb if k in content} - set(ka)
    if not only_a or not only_b:
        return []

    def slots(keys: tuple[str, ...], only: set[str]) -> dict[str, set[tuple[str, str]]]:
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
    ka, kb = word_keys(a), word_keys(b)
    if ka == kb or _counts(ka) != _counts(kb):
        return False
    big_a = set(zip(ka, ka[1:], strict=False))
    return sum(p not in big_a for p in zip(kb, kb[1:], strict=False)) >= SWAP_MIN_NEW_BIGRAMS


@lru_cache(maxsize=8192)
def bigrams(words: tuple[str, ...]) -> frozenset[tuple[str, str]]:
    """Each two neighbouring words' keys (once per text)."""
    keys = word_keys(words)
    return frozenset(zip(keys, keys[1:], strict=False))


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


# Words of a text for its polarity: lower-case, "n't" split off as "not", and a few fixed
# phrases made one word ("out of order" -> "unordered", "up to date" -> "current").
_POLAR_PHRASES = (
    (re.compile(r"\bout[ -]of[ -]order\b"), " unordered "),
    (re.compile(r"\bin[ -]order\b(?!\s+(?:to|for)\b)"), " ordered "),
    (re.compile(r"\bout[ -]of[ -]date\b"), " outdated "),
    (re.compile(r"\bup[ -]to[ -]date\b"), " current "),
    (re.compile(r"\b(?:ahead of|prior to|in advance of)\b"), " before "),
)
_WORD = re.compile(r"[a-z0-9]+|[.,;:!?()]")
_NEGATOR_WORDS = frozenset({"not", "never", "no", "cannot", "without", "nor", "neither"})
# Phrases that set the word after them against the rest ("X instead of Y"): what follows is
# not asserted.
_CONTRASTING = re.compile(r"\b(?:instead of|rather than|as opposed to|in place of)\b")
# ("a": asynchronous is in the lexicon; as a prefix it reads "A-level" as "level" negated.)
_NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "non", "dis", "de")
# Words that carry no polarity of their own between a negator and what it negates.
_AUXILIARY = frozenset(
    """be been being is are was were do does did have has had get gets got go goes will would
    should must can could may might need needs to a an the any by for on in at of with this that
    it its their them they we you our your ever always really actually yet""".split()
)


@lru_cache(maxsize=4096)
def polar_words(text: str) -> tuple[str, ...]:
    low = text.lower().replace("’", "'").replace("n't", " not")
    for pattern, repl in _POLAR_PHRASES:
        low = pattern.sub(repl, low)
    return tuple(_WORD.findall(low.replace("-", "")))


@lru_cache(maxsize=65536)
def _prefix_forms(x: str) -> frozenset[str]:
    out = {p + x for p in _NEGATING_PREFIXES} if len(x) >= 4 else set()
    out |= {x[len(p) :] for p in _NEGATING_PREFIXES if x.startswith(p) and len(x) - len(p) >= 4}
    return frozenset(out)


@lru_cache(maxsize=4096)
def _polar_set(text: str) -> frozenset[str]:
    return frozenset(polar_words(text))


def polar_pairs(text_a: str, text_b: str) -> list[tuple[str, str]]:
    """(word only in a, word only in b) of opposite polarity: the two members of one line of
    `text.POLAR_FORMS` ("allowed" / "prohibited", "scale up" / "scale down", "in order" / "out
    of order"), or a word and itself with a negating prefix ("safe" / "unsafe"). A rewording
    that trades one for the other also flips a negation; see `flips_polarity`."""
    from memsieve.gate import text as gtext

    wa, wb = _polar_set(text_a), _polar_set(text_b)
    only_a, only_b = wa - wb, wb - wa
    ma = {gtext.POLAR_INDEX[w]: w for w in sorted(only_a) if w in gtext.POLAR_INDEX}
    mb = {gtext.POLAR_INDEX[w]: w for w in sorted(only_b) if w in gtext.POLAR_INDEX}
    pairs = [
        (ma[x], mb[y])
        for x in sorted(set(ma) - set(mb))
        for y in sorted(set(mb) - set(ma))
        if x[0] == y[0]
    ]
    pairs += [
        (x, y) for x in sorted(only_a) if x.isalpha() for y in sorted(_prefix_forms(x) & only_b)
    ]
    return sorted(set(pairs))


def polar_flips(text_a: str, text_b: str) -> int:
    """The polar pairs of the two texts whose members are both asserted: "never closed" /
    "unclosed" is no flip (the negation moved into the word), nor is "before" / "after" with
    the operands swapped ("X before Y" / "Y after X": `judge_converse.order_kept`)."""
    na, _ = negation_scopes(text_a)
    nb, _ = negation_scopes(text_b)
    pairs = polar_pairs(text_a, text_b)
    wa, wb = polar_words(text_a), polar_words(text_b)
    if any({x, y} == judge_converse.ORDER_WORDS for x, y in pairs) and judge_converse.order_kept(
        wa, wb
    ):
        pairs = [(x, y) for x, y in pairs if {x, y} != judge_converse.ORDER_WORDS]
    if pairs and judge_converse.comparison_kept(wa, wb):
        pairs = [(x, y) for x, y in pairs if not _comparative(x, y)]
    if len(pairs) == 1 and judge_converse.restated_from_other_side(wa, wb):
        return 0
    return sum(_fold(x) not in na and _fold(y) not in nb for x, y in pairs)


def _comparative(x: str, y: str) -> bool:
    """A comparison's two words ("faster" / "slower", "cheaper" / "expensive" as in "more
    expensive")."""
    return x.endswith("er") or y.endswith("er")


@lru_cache(maxsize=4096)
def negation_scopes(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(words negated, words asserted): the first content word after a negator ("does not
    run" -> run) or after a contrasting phrase ("instead of a tag" -> tag) is negated; every
    other content word is asserted. Words are folded (`word_key`, and a final "s" dropped)."""
    from memsieve.gate import text as gtext

    negated: set[str] = set()
    asserted: set[str] = set()
    words = polar_words(_CONTRASTING.sub(" not ", text.lower()))
    pending = False
    for w in words:
        if not w.isalnum():
            pending = False
            continue
        if w in _NEGATOR_WORDS:
            pending = True
            continue
        if w in _AUXILIARY or w in gtext.STOPWORDS:
            continue
        key = _fold(w)
        if pending:
            negated.add(key)
            pending = False
        else:
            asserted.add(key)
    return frozenset(negated), frozenset(asserted)


@lru_cache(maxsize=65536)
def _fold(w: str) -> str:
    k = word_key(w)
    return k[:-1] if len(k) > 3 and k.endswith("s") and not k.endswith("ss") else k


def negated_asserted(text_a: str, text_b: str) -> int:
    """Words one text negates and the other asserts, never negating them: "the handler is
    not idempotent" / "the handler is idempotent" -> 1; "pin by digest, not by tag" / "by its
    digest instead of a tag" -> 0."""
    na, aa = negation_scopes(text_a)
    nb, ab = negation_scopes(text_b)
    return len((na - nb) & (ab - nb)) + len((nb - na) & (aa - na))


def diff_positions(text_a: str, text_b: str) -> tuple[float, float]:
    """(first, mean) relative position (0 = first content word, 1 = last) of the content
    words, numbers included, that one text has and the other lacks, over both texts; (1, 1)
    when none differs. A value changed late in the sentence is the predicate's (an update:
    "listens on port 9100" / "port 9464"); early, it names another subject ("Shard 3 of the
    users database ..." / "Shard 7 ...": a distinct fact)."""
    ka, kb = _content_keys(text_a), _content_keys(text_b)
    sa, sb = set(ka), set(kb)
    pos = [i / max(1, len(ka) - 1) for i, k in enumerate(ka) if k not in sb]
    pos += [i / max(1, len(kb) - 1) for i, k in enumerate(kb) if k not in sa]
    if not pos:
        return 1.0, 1.0
    return min(pos), sum(pos) / len(pos)


@lru_cache(maxsize=4096)
def _content_keys(text: str) -> tuple[str, ...]:
    """The folded content words of `text`, numbers included, in order (once per text: a
    text meets several candidates)."""
    from memsieve.gate import text as gtext

    return tuple(
        _fold(w)
        for w in polar_words(text)
        if w.isalnum() and w not in _AUXILIARY and w not in gtext.STOPWORDS
    )


def clause_moved(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """The content words both texts use once, in b's order, are a rotation of a's (at least
    three of them, not the same order): a clause moved to the front ("Run `make lint` before
    opening a PR" / "Before opening PRs, run `make lint`"), where a swap of roles exchanges
    two words inside the sentence ("A depends on B" / "B depends on A")."""
    ka, kb = word_keys(a), word_keys(b)
    ca, cb = _counts(ka), _counts(kb)
    shared = {k for k in ka if ca[k] == 1 and cb.get(k) == 1}
    sa = [k for k in ka if k in shared]
    sb = [k for k in kb if k in shared]
    if len(sa) < 3 or sa == sb:
        return False
    return any(sa[i:] + sa[:i] == sb for i in range(1, len(sa)))


@lru_cache(maxsize=8192)
def _counts(keys: tuple[str, ...]) -> dict[str, int]:
    """How often each key occurs (once per text; read only)."""
    from collections import Counter

    return dict(Counter(keys))

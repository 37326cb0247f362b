"""Guards for the dedupe gate: cheap, pure checks that veto a supersede.

Each guard matches `memsieve.gate.decide.Guard`: `(incoming, candidate) -> list[Veto]`. A veto means
"these two texts may state different facts": the gate then inserts the incoming memory beside
the candidate instead of hiding the candidate. Embeddings are nearly blind to what these
guards look at (digits, identifiers, dates, names, negation, who-does-what-to-whom), so the
guards are where precision comes from; the threshold is where recall comes from.

A correction that names its target (`incoming.target_memory_id == candidate.memory_id`) is
never vetoed. Every guard costs tens of microseconds: the text analysis is cached per text.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from memsieve.gate import text
from memsieve.gate.decide import Candidate, Guard, Incoming, Veto
from memsieve.gate.guards_exact import code_guard, diff_detail, time_zone_guard
from memsieve.gate.text import Analysis
from memsieve.schemas.memory import memory_text  # the one join: embedded, hashed, compared

# The swapped-roles and negation checks apply only when the two texts share at least this
# fraction of their content words (the same sentence with its parts exchanged or a "not"
# added); a rewording changes the words.
SWAP_MIN_OVERLAP = 0.7
NEGATION_MIN_OVERLAP = 0.6
ANCHOR_MAX_DESCENTS = 0
WORD_MAX_DESCENTS = 0


def _pair(incoming: Incoming, candidate: Candidate) -> tuple[Analysis, Analysis] | None:
    if incoming.target_memory_id is not None and incoming.target_memory_id == candidate.memory_id:
        return None
    return (
        _analysis(incoming.heading, incoming.content),
        _analysis(candidate.heading, candidate.content),
    )


@lru_cache(maxsize=1024)
def _analysis(heading: str, content: str) -> Analysis:
    # Keyed by the two strings (their hashes are cached by Python), not the joined text
    # that every guard call would build and hash again. Small: it only saves that join
    # for the pairs at hand; `analyse` holds the analyses (a second large cache would
    # keep alive the ones it evicted).
    return text.analyse(memory_text(heading, content))


def _set_guard(
    name: str,
    attr: str,
    droppable: Callable[[str], bool] | None = None,
    changed: Callable[[Analysis, Analysis], tuple[list[str], list[str]]] | None = None,
) -> Guard:
    """A guard that vetoes when either text has a term of class `attr` the other lacks;
    terms that are `droppable` may be missing from one text while the other adds none; and
    when `changed` finds terms the two texts say differently."""

    def guard(incoming: Incoming, candidate: Candidate) -> list[Veto]:
        pair = _pair(incoming, candidate)
        if pair is None:
            return []
        a, b = pair
        new = text.unmatched(getattr(a, attr), b)
        old = text.unmatched(getattr(b, attr), a)
        if changed is not None and not new and not old:
            new, old = changed(a, b)
        if droppable is not None:
            if not old and all(map(droppable, new)):
                new = []
            if not new and all(map(droppable, old)):
                old = []
        if not new and not old:
            return []
        return [Veto(name, diff_detail(new, old))]

    guard.__name__ = f"{name}_guard"
    guard.__doc__ = f"Veto when the {attr} of the two texts differ."
    return guard


def numbers_guard(incoming: Incoming, candidate: Candidate) -> list[Veto]:
    """Veto when the numbers differ (counts, ports, versions, sizes, 'five' == '5')."""
    pair = _pair(incoming, candidate)
    if pair is None:
        return []
    a, b = pair
    # A quantity stated with an article ("an hour") matches the other's number (60 minutes).
    # "SOC 2" == "SOC2": a number the other text glues into an identifier with a shared word.
    new = sorted(a.numbers - b.numbers - b.soft_numbers - text.numbers_glued(b, a))
    old = sorted(b.numbers - a.numbers - a.soft_numbers - text.numbers_glued(a, b))
    if not new and not old:  # both say a period softly ("daily" / "weekly"), not one period
        new, old = text.changed_periods(a, b)
    if not new and not old:
        return []
    return [Veto("numbers", diff_detail(new, old))]


# A product name in PascalCase that one text drops ("HashiCorp Vault" / "Vault") vetoes only
# when replaced; a slot's hyphenated name is compared as written ("bucket acme-data-exports" /
# "bucket acme-data-export": another bucket, where `unmatched` folds the plural).
identifiers_guard = _set_guard(
    "identifiers", "identifiers", text.is_product_name, text.changed_slot_names
)
# "yesterday" said on one side only is a rewording; "today" / "tomorrow" is a changed date.
dates_guard = _set_guard("dates", "dates", text.droppable_date, text.changed_moments)


def _substitution_guard(name: str, attr: str, doc: str) -> Guard:
    """A guard that vetoes only a substitution: a term of class `attr` on each side that the
    other lacks. A rewording may drop one ("the Docker image" -> "the image")."""

    def guard(incoming: Incoming, candidate: Candidate) -> list[Veto]:
        pair = _pair(incoming, candidate)
        if pair is None:
            return []
        new = text.unmatched(getattr(pair[0], attr), pair[1])
        old = text.unmatched(getattr(pair[1], attr), pair[0])
        return [Veto(name, diff_detail(new, old))] if new and old else []

    guard.__name__, guard.__doc__ = f"{name}_guard", doc
    return guard


entities_guard = _substitution_guard(
    "entities",
    "entities",
    "Veto when each text names something the other does not (Missouri vs America).",
)
# "hand-edit" reworded to "edit by hand" still matches; a dropped compound is no new fact.
compounds_guard = _substitution_guard(
    "compounds",
    "compounds",
    "Veto when each text has a hyphenated term the other lacks (web-frontend vs web-backend).",
)


def contrast_guard(incoming: Incoming, candidate: Candidate) -> list[Veto]:
    """Veto when the texts name different members of one exclusive group (tabs vs spaces)."""
    pair = _pair(incoming, candidate)
    if pair is None:
        return []
    a, b = pair
    groups_a: dict[int, set[str]] = {}
    groups_b: dict[int, set[str]] = {}
    for g, term in a.contrasts:
        groups_a.setdefault(g, set()).add(term)
    for g, term in b.contrasts:
        groups_b.setdefault(g, set()).add(term)
    vetoes = []
    # Units whose quantities the numbers guard compares ("two weeks" == "14 days").
    units_compared = any(":" in n for n in a.numbers) and any(":" in n for n in b.numbers)
    for g in sorted(groups_a.keys() & groups_b.keys()):
        if units_compared and g in _UNIT_GROUPS:
            continue
        only_a = groups_a[g] - groups_b[g]
        only_b = groups_b[g] - groups_a[g]
        if only_a and only_b:
            vetoes.append(Veto("contrast", diff_detail(sorted(only_a), sorted(only_b))))
    # Antonyms by prefix: "synchronous" vs "asynchronous", "safe" vs "unsafe" -- unless one
    # side is negated, when the two negations cancel ("never closed" == "unclosed").
    if a.negated == b.negated:
        for x, y in prefix_antonym_pairs(a, b):
            vetoes.append(Veto("contrast", diff_detail([x], [y])))
    return vetoes


def prefix_antonym_pairs(a: Analysis, b: Analysis) -> list[tuple[str, str]]:
    """(word of a, word of b) pairs where one is the other with a negating prefix."""
    only_a_words = set(a.content_words) - set(b.content_words)
    only_b_words = set(b.content_words) - set(a.content_words)
    return [
        (x, y)
        for x in sorted(only_a_words)
        for y in sorted(_prefix_antonym_forms(x) & only_b_words)
    ]


_UNIT_GROUPS = frozenset(
    i
    for i, g in enumerate(text.CONTRAST_GROUPS)
    if " ".join(sorted(g)) in {" ".join(sorted(u.split())) for u in text.UNIT_CONTRASTS}
)
_NEGATING_PREFIXES = ("a", "un", "in", "im", "il", "ir", "non", "dis", "de")


@lru_cache(maxsize=65536)
def _prefix_antonym_forms(x: str) -> frozenset[str]:
    """Every antonym of x by prefix: x with a negating prefix added or removed (each side
    at least 4 letters)."""
    out = {p + x for p in _NEGATING_PREFIXES} if len(x) >= 4 else set()
    out |= {x[len(p) :] for p in _NEGATING_PREFIXES if x.startswith(p) and len(x) - len(p) >= 4}
    return frozenset(out)


def negation_guard(incoming: Incoming, candidate: Candidate) -> list[Veto]:
    """Veto when one text is negated and the other is not ('do X' vs 'never do X')."""
    pair = _pair(incoming, candidate)
    if pair is None or pair[0].negated == pair[1].negated:
        return []
    if overlap(pair[0].content_words, pair[1].content_words) < NEGATION_MIN_OVERLAP:
        return []
    if prefix_antonym_pairs(pair[0], pair[1]):
        return []  # "never closed" == "unclosed": the negation moved into the word
    which = "incoming" if pair[0].negated else "memory"
    return [Veto("negation", f"only the {which} text is negated")]


def swapped_roles_guard(incoming: Incoming, candidate: Candidate) -> list[Veto]:
    """Veto when the texts use (nearly) the same words in a different order.

    'A depends on B' vs 'B depends on A': the same content words, with a pair of them
    inverted. A rewording changes the words; the same words rearranged change who does
    what to whom.
    """
    pair = _pair(incoming, candidate)
    if pair is None:
        return []
    a, b = pair
    if overlap(a.words, b.words) < SWAP_MIN_OVERLAP:
        return []
    inverted = first_inversion(a.anchors, b.anchors, max_descents=ANCHOR_MAX_DESCENTS)
    if inverted is None:
        inverted = first_inversion(a.words, b.words, max_descents=WORD_MAX_DESCENTS)
    if inverted is None or one_block_moved(a.words, b.words):
        return []
    return [Veto("swapped_roles", f"'{inverted[0]}' and '{inverted[1]}' change places")]


def one_block_moved(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """The words both texts use once keep their order but for one run of them that moved
    past the run beside it, the two runs meeting with no word between them on at least one
    side ("in 2009 he moved back" / "he moved back in 2009"): a phrase moved, not two roles
    exchanged around a pivot ("from A to B" / "from B to A", "A beat B" / "B defeated A").
    A lone word moving is not a phrase moved ("only admins may" / "admins may only")."""
    pos_a, pos_b = once_in_both(a, b)
    shared = [a[i] for i in pos_a]
    rank = [0] * len(shared)
    for r, t in enumerate(sorted(range(len(shared)), key=lambda t: pos_b[shared[t]])):
        rank[t] = r
    n = len(rank)
    i = next((t for t in range(n) if rank[t] != t), n)
    if i == n:
        return False
    j, k = rank[i], i
    while k < n and rank[k] == j + k - i:
        k += 1
    end = k + j - i  # shared[i:k] comes after shared[k:end] in b
    if rank[k:] != list(range(i, j)) + list(range(j + k - i, n)) or min(k - i, j - i) < 2:
        return False
    return pos_a[k] == pos_a[k - 1] + 1 or pos_b[shared[i]] == pos_b[shared[end - 1]] + 1


def overlap(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """Jaccard overlap of two texts' content-word sets."""
    set_a, set_b = set(a), set(b)
    if not set_a or not set_b:
        return 0.0
    return len(set_a & set_b) / len(set_a | set_b)


def once_in_both(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[list[int], dict[str, int]]:
    """(where in `a`, in order, the terms are that each sequence has exactly once, term ->
    its place in `b`): only such terms have an unambiguous position for an order check."""
    pos_b = text.once_positions(b)
    return [i for w, i in text.once_positions(a).items() if w in pos_b], pos_b


def first_inversion(
    a: tuple[str, ...], b: tuple[str, ...], max_descents: int = 0
) -> tuple[str, str] | None:
    """Two terms found in both sequences in opposite orders, if the order of the shared
    terms breaks more than `max_descents` times; else None."""
    pos_a, pos_b = once_in_both(a, b)
    shared = [a[i] for i in pos_a]
    descents = 0
    inverted: tuple[str, str] | None = None
    for prev, cur in zip(shared, shared[1:], strict=False):
        if pos_b[cur] < pos_b[prev]:
            descents += 1
            inverted = inverted or (prev, cur)
    return inverted if descents > max_descents else None


def default_guards() -> tuple[Guard, ...]:
    """Every guard, in the order their vetoes are reported."""
    return (
        numbers_guard,
        identifiers_guard,
        dates_guard,
        time_zone_guard,
        code_guard,
        entities_guard,
        compounds_guard,
        contrast_guard,
        negation_guard,
        swapped_roles_guard,
    )

"""An update by its shape: one value changed in a sentence about the same subject.

A veto from a value guard (a number, an identifier, a date, a name, one of an exclusive group)
with exactly one term on each side, in two texts that share their subject (the same heading,
or half their other content words): "Deploys run on Fridays" / "Deploys run on Thursdays".
Both the guards judge and the classifier read an update from it.
"""

from __future__ import annotations

from collections.abc import Sequence

from memsieve.gate import guards, text
from memsieve.gate.decide import Candidate, Incoming, Veto

# Guards whose veto names a value that changed (a number, an identifier, a date, a name, one
# of an exclusive group) rather than a changed sentence (negation, swapped roles).
VALUE_GUARDS = frozenset(
    {"numbers", "identifiers", "dates", "code", "entities", "compounds", "contrast"}
)
# Content words the two texts must share (Jaccard, apart from the changed value) to be
# about the same subject.
SUBJECT_MIN_OVERLAP = 0.5


def one_value_changed(incoming: Incoming, candidate: Candidate, vetoes: Sequence[Veto]) -> bool:
    """One veto from a value guard, one value on each side, and a shared subject. Two words
    that change places (the swapped-roles guard) beside it are a clause moved, not a second
    value changed ("the rate limit is 100 requests per minute per key" / "the rate limit per
    key is 300 requests per minute"); two values that change places are not an update."""
    vetoes = [v for v in vetoes if v.guard != "swapped_roles" or _values_swapped(v.detail)]
    if len(vetoes) != 1 or vetoes[0].guard not in VALUE_GUARDS:
        return False
    new, old = sides(vetoes[0].detail)
    if len(new) != 1 or len(old) != 1:
        return False
    if incoming.heading and incoming.heading.strip().lower() == candidate.heading.strip().lower():
        return True
    a = text.analyse(guards.memory_text(incoming.heading, incoming.content))
    b = text.analyse(guards.memory_text(candidate.heading, candidate.content))
    changed = {new[0].lower(), old[0].lower()}
    words_a = tuple(w for w in a.content_words if w not in changed)
    words_b = tuple(w for w in b.content_words if w not in changed)
    return guards.overlap(words_a, words_b) >= SUBJECT_MIN_OVERLAP


def sides(detail: str) -> tuple[list[str], list[str]]:
    """The terms each side has in a guard's detail ("incoming has a, b; memory has c")."""
    new: list[str] = []
    old: list[str] = []
    for part in detail.split("; "):
        if part.startswith("incoming has "):
            new = part.removeprefix("incoming has ").split(", ")
        elif part.startswith("memory has "):
            old = part.removeprefix("memory has ").split(", ")
    return new, old


def _values_swapped(detail: str) -> bool:
    from memsieve.gate import judge_shapes

    return judge_shapes.values_swapped(detail)

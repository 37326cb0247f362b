"""An update by its shape: one value changed in a sentence about the same subject.

A veto from a value guard (a number, an identifier, a date, a name, one of an exclusive group)
with exactly one term on each side, in two texts that share their subject (the same heading,
half their other content words, or -- where the classifier has the texts' token alignment --
most of their other words aligned): "Deploys run on Fridays" / "Deploys run on Thursdays",
"The on-call rotation hands over every Monday at 10 AM" / "On-call handover happens every
Wednesday at 10 AM". Both the guards judge and the classifier read an update from it.
"""

from __future__ import annotations

from collections.abc import Sequence

from memsieve.gate import guards, text
from memsieve.gate.decide import Candidate, Incoming, Veto
from memsieve.gate.judge_align import Alignment, word_key

# Guards whose veto names a value that changed (a number, an identifier, a date, a name, one
# of an exclusive group) rather than a changed sentence (negation, swapped roles).
VALUE_GUARDS = frozenset(
    {"numbers", "identifiers", "dates", "code", "entities", "compounds", "contrast"}
)
# Content words the two texts must share (Jaccard, apart from the changed value) to be
# about the same subject.
SUBJECT_MIN_OVERLAP = 0.5
# Or, reworded: the share of each side's other words aligned with the other text (best
# similarity of the token alignment at or over SUBJECT_ALIGNED_AT).
SUBJECT_MIN_ALIGNED = 0.6
SUBJECT_ALIGNED_AT = 0.55


def one_value_changed(
    incoming: Incoming,
    candidate: Candidate,
    vetoes: Sequence[Veto],
    alignment: Alignment | None = None,
) -> bool:
    """One veto from a value guard, one value on each side, and a shared subject. Two words
    that change places (the swapped-roles guard) beside it are a clause moved, not a second
    value changed ("the rate limit is 100 requests per minute per key" / "the rate limit per
    key is 300 requests per minute"); two values that change places are not an update.
    `alignment` (live, incoming): the pair's token alignment, where the judge has one."""
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
    if guards.overlap(words_a, words_b) >= SUBJECT_MIN_OVERLAP:
        return True
    return alignment is not None and subject_aligned(alignment, {word_key(w) for w in changed})


def subject_aligned(alignment: Alignment, changed: set[str]) -> bool:
    """Most words of each side but the changed value align with the other text: the same
    sentence reworded around one new value."""
    shares = []
    for words, best in (
        (alignment.a_words, alignment.a_best),
        (alignment.b_words, alignment.b_best),
    ):
        kept = [float(s) for w, s in zip(words, best, strict=True) if word_key(w) not in changed]
        if not kept:
            return False
        shares.append(sum(s >= SUBJECT_ALIGNED_AT for s in kept) / len(kept))
    return min(shares) >= SUBJECT_MIN_ALIGNED


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

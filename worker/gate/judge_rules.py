"""Shapes of a close pair that overrule the classifier's model, read from its features
(`memsieve.gate.judge_features.PairFeatures`): a pair that is never the same fact, and a pair
that is an update by its shape alone. Used at run time (`memsieve.gate.judge_classifier`)
and by the training script, so the two never drift apart."""

from __future__ import annotations

from memsieve.gate import text as gtext
from memsieve.gate import value_change
from memsieve.gate.judge_align import word_key
from memsieve.gate.judge_features import FEATURE_NAMES, PairFeatures


def reverses_rule(f: PairFeatures) -> bool:
    """The incoming text announces a change ("no longer", "stopped", "now") and flips the
    negation of the other: a reversed rule, an update, never a rewording."""
    v = dict(zip(FEATURE_NAMES, f.values, strict=True))
    return bool(v["reversal_b_only"]) and bool(v["negation_mismatch"])


def flips_polarity(f: PairFeatures) -> bool:
    """One text trades a word for its opposite ("allowed" / "prohibited", "scale up" / "scale
    down", "safe" / "unsafe") and neither adds nor drops a negation to compensate: the
    statement's polarity flipped, so the two never state the same fact."""
    v = dict(zip(FEATURE_NAMES, f.values, strict=True))
    return bool(v["polarity_flipped"])


def member_swapped(f: PairFeatures) -> bool:
    """Each text names another member of one exclusive group (`text.CONTRAST_GROUPS`: tools,
    languages, schedules ...), and neither member aligns with anything on the other side:
    one replaced the other ("Python services use pip-tools for dependency locking" / "...
    lock dependencies with uv"), never a rewording of it. A member that aligns with its
    counterpart's context stays for the model to weigh."""
    unaligned_a = {word_key(w) for w in f.unaligned_a}
    unaligned_b = {word_key(w) for w in f.unaligned_b}
    for v in f.soft_vetoes:
        if v.guard != "contrast":
            continue
        new, old = value_change.sides(v.detail)
        if len(new) != 1 or len(old) != 1:
            continue
        if not any({new[0], old[0]} <= group for group in gtext.CONTRAST_GROUPS):
            continue
        if word_key(new[0]) in unaligned_b and word_key(old[0]) in unaligned_a:
            return True
    return False


def never_same(f: PairFeatures) -> bool:
    """A shape that overrules the model: a reversed rule, a flipped polarity, one member of
    an exclusive group swapped for another, a code-quoted name replaced, a name the
    incoming text forbids for another, or a change the incoming text alone announces ("has
    taken over", "moved to", "is now")."""
    return (
        reverses_rule(f)
        or flips_polarity(f)
        or member_swapped(f)
        or f.code_name_replaced
        or f.name_forbidden
        or f.change_announced
    )


def changes_a_value(f: PairFeatures) -> bool:
    """A pair that is not the same fact reads as an update by its shape alone: a rule
    reversed, one slot's value swapped, or a statement's polarity flipped (the same subject,
    "allowed" then "blocked": two live rows that contradict each other, linked as a conflict
    rather than left silent); or the incoming text says outright that something changed."""
    return reverses_rule(f) or one_slot_swapped(f) or flips_polarity(f) or f.change_announced


def one_slot_swapped(f: PairFeatures) -> bool:
    """The two texts differ in one word each, and those stand in the same slot: one value
    (a tool, an owner, a place) swapped in the same sentence."""
    v = dict(zip(FEATURE_NAMES, f.values, strict=True))
    return v["substitutions"] == 1 and v["lex_only_a"] == 1 and v["lex_only_b"] == 1

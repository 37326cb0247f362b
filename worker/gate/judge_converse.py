"""The converse of an order: "X before Y" states what "Y after X" states. A pair that trades
"before" for "after" flips its polarity only when the two operands keep their sides ("run
migrations before deploying" / "... after deploying"); when they swap sides ("ask on-call
before restarting a broker" / "restart a broker only after checking with on-call") the
order is the same. The same holds for a comparison ("A is faster than B" / "B is slower than
A": `comparison_kept`). And a rule said from its other side cancels the opposite it trades:
"rejects any card that is not a test card" / "accepts only test cards", "never leave the
tunnel open" / "always close the tunnel" (`restated_from_other_side`). Read by
`memsieve.gate.judge_shapes.polar_flips`."""

from __future__ import annotations

from collections.abc import Sequence

from memsieve.gate import text as gtext
from memsieve.gate.judge_align import word_key

ORDER_WORDS = frozenset({"before", "after"})
# Operand words are compared by their first letters: "debug" / "debugging", "deploy" /
# "deployment" are one operand.
_KEY_LETTERS = 5


def _keys(ws: Sequence[str]) -> frozenset[str]:
    """An operand's content words, each by its first letters."""
    return frozenset(
        word_key(w)[:_KEY_LETTERS]
        for w in ws
        if w.isalnum() and w not in gtext.STOPWORDS and len(w) > 1
    )


def operands(text_words: Sequence[str]) -> tuple[frozenset[str], frozenset[str]] | None:
    """(content words of what comes first, of what comes second) around the one "before" /
    "after" of a text's words and marks (`judge_shapes.polar_words`: "prior to" is "before");
    None without exactly one. "X before Y" and "Y after X" both give (X, Y); a fronted
    clause ("Before Y, X" / "After X, Y") is read the same way."""
    words = list(text_words)
    at = [i for i, w in enumerate(words) if w in ORDER_WORDS]
    if len(at) != 1:
        return None
    i = at[0]
    order = words[i]

    left, right = words[:i], words[i + 1 :]
    if not _keys(left) and "," in right:  # a fronted clause: "Before Y, X"
        comma = right.index(",")
        left, right = right[comma + 1 :], right[:comma]
    first, second = (
        (_keys(left), _keys(right)) if order == "before" else (_keys(right), _keys(left))
    )
    return first, second


def order_kept(words_a: Sequence[str], words_b: Sequence[str]) -> bool:
    """The two texts trade "before" for "after" and their operands swap sides with it: the
    same order stated from its other end, no flip. The words each operand shares with the
    other text's swapped operand must outnumber those it shares with its unswapped one."""
    oa, ob = operands(words_a), operands(words_b)
    if oa is None or ob is None:
        return False
    (fa, sa), (fb, sb) = oa, ob
    kept = len(fa & fb) + len(sa & sb)
    crossed = len(fa & sb) + len(sa & fb)
    return kept > crossed


def _than_operands(
    text_words: Sequence[str],
) -> tuple[frozenset[str], frozenset[str]] | None:
    """(content words before "than", after it) of a text with exactly one "than"."""
    words = list(text_words)
    at = [i for i, w in enumerate(words) if w == "than"]
    if len(at) != 1:
        return None

    return _keys(words[: at[0]]), _keys(words[at[0] + 1 :])


def comparison_kept(words_a: Sequence[str], words_b: Sequence[str]) -> bool:
    """ "A is faster than B" / "B is slower than A": the two texts trade a comparative for its
    opposite and the compared things swap sides of "than" with it: words on one side only
    cross over both ways, and none of what follows "than" in one text follows it in the
    other. Words on both sides of a text ("parser" in "the Rust parser ... than the pandas
    parser") name neither thing."""
    oa, ob = _than_operands(words_a), _than_operands(words_b)
    if oa is None or ob is None:
        return False
    (la, ra), (lb, rb) = oa, ob
    la, ra, lb, rb = la - ra, ra - la, lb - rb, rb - lb
    return bool(la & rb) and bool(ra & lb) and not ra & rb


# A rule stated as what alone is let through ("accepts only test cards") ...
_RESTRICTIVE = frozenset({"only", "solely", "exclusively"})
# ... and as what is refused unless or except ("rejects any card that is not a test card").
_EXCEPTING = frozenset({"not", "no", "never", "cannot", "without", "unless", "except"})


def restated_from_other_side(words_a: Sequence[str], words_b: Sequence[str]) -> bool:
    """One text says "only", the other an exception ("not", "unless", "without"); or one
    says "never" where the other says "always": a rule said from its other side, whose
    opposite words ("rejects" / "accepts", "open" / "close") restate it."""
    sa, sb = set(words_a), set(words_b)
    for x, y in ((sa, sb), (sb, sa)):
        if x & _RESTRICTIVE and not y & _RESTRICTIVE and y & _EXCEPTING:
            return True
        if "never" in x and "always" in y and "always" not in x and "never" not in y:
            return True
    return False

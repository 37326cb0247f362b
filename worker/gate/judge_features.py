"""Features of a close pair for the trained pair classifier (`memsieve.gate.judge_classifier`).

One function, `pair_features`, used both by the training script (scripts/train_judge.py) and
at run time, so the two never drift apart. Every feature is cheap once the texts' word vectors
are known: the cosine distance the gate already has, the token alignment
(`memsieve.gate.judge_align`), the lexical guards' vetoes, and a few counts.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from memsieve.gate import guards as gguards
from memsieve.gate import judge_converse, judge_exchange, judge_mid, judge_shapes
from memsieve.gate import text as gtext
from memsieve.gate.decide import Veto
from memsieve.gate.judge_align import Alignment, word_key, word_keys
from memsieve.gate.judge_markers import markers, prohibits

# Similarity under which a content word counts as not aligned with anything on the other side.
UNALIGNED = (0.55, 0.65, 0.75)

# Soft guards: their vetoes are features, weighed with the rest. The hard guards (numbers,
# identifiers, dates) still veto on their own: a changed number is never the same fact.
HARD_GUARDS = ("numbers", "identifiers", "dates", "code")
SOFT_GUARDS = ("entities", "compounds", "contrast", "negation", "swapped_roles")

FEATURE_NAMES: tuple[str, ...] = (
    "bias",
    "distance",
    "align_min",
    "align_mean",
    "align_min_a",
    "align_min_b",
    *(f"unaligned_{t}" for t in UNALIGNED),
    *(f"unaligned_both_{t}" for t in UNALIGNED),
    "shared_ctx_min",
    "shared_ctx_mean",
    "shared_ctx_low",
    "frac_unaligned_max",
    "frac_unaligned_min",
    "unaligned_max_side",
    "jaccard",
    "len_ratio",
    "len_log_total",
    *(f"veto_{g}" for g in SOFT_GUARDS),
    "marker_b_only",
    "negation_mismatch",
    "correction_marker",
    "order_inversions",
    "unaligned_b_only",
    "unaligned_a_only",
    *(f"veto_{g}" for g in HARD_GUARDS),
    "substitutions",
    "substituted_align_min",
    "bigram_jaccard",
    "lex_only_a",
    "lex_only_b",
    "update_marker_any",
    "antonyms",
    "swap_same_bag",
    "reversal_b_only",
    "polar_flips",
    "polarity_flipped",
    "negated_asserted",
    "diff_pos_first",
    "diff_pos_mean",
    "clause_moved",
    "polarity_mismatch",
    *(f"mid_{w}_{s}" for w in ("content", "any") for s in judge_mid.STATS),
)


@dataclass(frozen=True)
class PairFeatures:
    values: np.ndarray  # float64, len(FEATURE_NAMES)
    hard_vetoes: tuple[Veto, ...]
    soft_vetoes: tuple[Veto, ...]
    unaligned_a: tuple[str, ...]  # candidate words not aligned at the middle level
    unaligned_b: tuple[str, ...]  # incoming words not aligned
    content_a: int = 0  # content words of the candidate
    content_b: int = 0
    code_name_replaced: bool = False  # `code_name_replaced` of the two texts
    name_forbidden: bool = False  # `name_forbidden` of the two texts
    change_announced: bool = False  # the incoming text alone says a value changed
    alignment: Alignment | None = None  # the token alignment the features came from


def _inversions(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """How often the order of the words both texts use once breaks (0: same order)."""
    pos_a, pos_b = gguards.once_in_both(a, b)
    shared = [a[i] for i in pos_a]
    return sum(pos_b[y] < pos_b[x] for x, y in zip(shared, shared[1:], strict=False))


def split_vetoes(
    vetoes: Sequence[Veto], text_a: str = "", text_b: str = ""
) -> tuple[tuple[Veto, ...], tuple[Veto, ...]]:
    """(hard vetoes, soft vetoes): a compounds veto between sibling names is hard, and so is
    a swap of two values ("port 80 on the host maps to 8080" / the mirror)."""
    siblings = any(v.guard == "compounds" for v in vetoes) and judge_shapes.sibling_names(
        text_a, text_b
    )
    hard = tuple(
        v
        for v in vetoes
        if v.guard in HARD_GUARDS
        or (siblings and v.guard == "compounds")
        or (v.guard == "swapped_roles" and judge_shapes.values_swapped(v.detail))
    )
    soft = tuple(v for v in vetoes if v not in hard)
    # "X before Y" / "Y only after X": one order stated from its other end, no contrast.
    order = [v for v in soft if v.guard == "contrast" and _ORDER_ONLY.fullmatch(v.detail)]
    if order and judge_converse.order_kept(
        judge_shapes.polar_words(text_a), judge_shapes.polar_words(text_b)
    ):
        soft = tuple(v for v in soft if v not in order)
    # Two words traded places and nothing else changed: which value belongs to which
    # thing, or who does what to whom, was reversed (the word-order guard needs words used
    # once; this sees "the web tier may call the API tier, not the API tier the web tier").
    pair = judge_exchange.exchanged(text_a, text_b) if text_a and text_b else None
    if pair is not None:
        hard += (Veto("swapped_roles", f"'{pair[0]}' and '{pair[1]}' change places"),)
    return hard, soft


_ORDER_ONLY = re.compile(r"incoming has (?:before|after); memory has (?:before|after)")

# A span quoted as code: a name (a library, a file, a flag).
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def code_name_replaced(
    text_a: str, text_b: str, an_a: gtext.Analysis, an_b: gtext.Analysis, unaligned_a: set[str]
) -> bool:
    """The live text quotes a name as code ("use the `requests` library") that the incoming
    text drops -- not there even unquoted or joined, no word of it aligned with anything --
    while the incoming text brings content words of its own ("use httpx"): the name was
    replaced, never reworded."""
    own = set(an_b.content_words) - set(an_a.content_words) - an_a.vocabulary
    if not own:
        return False
    lower_b = text_b.lower()
    for span in _CODE_SPAN.findall(text_a):
        name = span.strip().lower()
        if not name or name in lower_b or re.sub(r"[^a-z0-9]", "", name) in an_b.vocabulary:
            continue
        parts = re.findall(r"[a-z0-9]+", name)
        if parts and all(word_key(p) in unaligned_a for p in parts):
            return True
    return False


# A negator and the rest of its clause (a dot inside a name, "moment.js", ends no clause).
_NEGATED_CLAUSE = re.compile(
    r"\b(?:not|never|no|don't|don’t|dont|do not|avoid|stop)\b((?:[^.;:,!?—]|\.(?=\w))*)",
    re.IGNORECASE,
)


def _flat(term: str) -> str:
    return re.sub(r"[^a-z0-9]", "", term.lower())


def _names(text: str, an: gtext.Analysis) -> set[str]:
    """The text's names (identifiers, hyphenated terms, capitalised names, code spans), each
    lower-cased with its punctuation dropped."""
    names = {_flat(t) for t in an.identifiers | an.compounds | an.entities}
    names |= {_flat(c) for c in _CODE_SPAN.findall(text)}
    return {n for n in names if n}


def name_forbidden(text_a: str, text_b: str, an_a: gtext.Analysis, an_b: gtext.Analysis) -> bool:
    """The live text states a name without any negation ("Use moment.js for date handling"),
    the incoming one names something the live text never mentions and puts the live name
    under a negation ("... uses date-fns; don't add moment.js"): a tool replaced, said
    flatly, never a rewording."""
    if an_a.negated or not an_b.negated:
        return False
    names_a = _names(text_a, an_a)
    flat_a = _flat(text_a)
    if not any(n not in flat_a for n in _names(text_b, an_b) - names_a):
        return False
    forbidden = {_flat(m.group(1)) for m in _NEGATED_CLAUSE.finditer(text_b)}
    return any(n in clause for clause in forbidden for n in names_a)


def pair_features(
    text_a: str,
    text_b: str,
    distance: float,
    alignment: Alignment,
    vetoes: Sequence[Veto],
) -> PairFeatures:
    """Features of (candidate text `a`, incoming text `b`)."""
    hard, soft = split_vetoes(vetoes, text_a, text_b)
    ab, bb = alignment.a_best, alignment.b_best
    # Counts and minima over a few words each: in Python (exact), not as numpy reductions
    # whose per-call cost dwarfs the work; the means stay numpy's (its summation order).
    la, lb = ab.tolist(), bb.tolist()
    both = np.concatenate([ab, bb]) if la or lb else np.ones(1)
    min_a = min(la) if la else 1.0
    min_b = min(lb) if lb else 1.0
    # How many of each side's words lie under each cut (sorted once, then bisected).
    sorted_a, sorted_b = sorted(la), sorted(lb)
    below_a = [bisect_left(sorted_a, t) for t in UNALIGNED]
    below_b = [bisect_left(sorted_b, t) for t in UNALIGNED]
    unaligned = [float(x + y) for x, y in zip(below_a, below_b, strict=True)]
    unaligned_both = [float(min(x, y)) for x, y in zip(below_a, below_b, strict=True)]
    an_a, an_b = gtext.analyse(text_a), gtext.analyse(text_b)
    wa = set(an_a.content_words)
    wb = set(an_b.content_words)
    jac = gguards.overlap(tuple(wa), tuple(wb))
    na, nb = max(1, len(ab)), max(1, len(bb))
    guard_names = {v.guard for v in soft}
    upd_a, corr_a, rev_a, chg_a = markers(text_a)
    upd_b, corr_b, rev_b, chg_b = markers(text_b)
    marker = float(upd_b and not upd_a)
    ctx = alignment.shared_context
    lctx = ctx.tolist()
    mid = UNALIGNED[1]
    ua, ub = float(below_a[1]), float(below_b[1])
    hard_names = {v.guard for v in hard}
    keys_a = frozenset(word_keys(an_a.content_words))
    keys_b = frozenset(word_keys(an_b.content_words))
    content_keys = keys_a | keys_b
    subs = judge_shapes.substitutions(an_a.words, an_b.words, content_keys)
    subst_words = {x for x, _ in subs} | {y for _, y in subs}
    best = dict(zip(word_keys(alignment.a_words), la, strict=True))
    best |= zip(word_keys(alignment.b_words), lb, strict=True)
    subst_align = min((float(best.get(w, 1.0)) for w in subst_words), default=1.0)
    big_a, big_b = judge_shapes.bigrams(an_a.words), judge_shapes.bigrams(an_b.words)
    bigram_jac = len(big_a & big_b) / max(1, len(big_a | big_b))
    flips = judge_shapes.polar_flips(text_a, text_b)
    values = np.array(
        [
            1.0,
            distance,
            min(la + lb) if la or lb else 1.0,
            float(both.mean()),
            min_a,
            min_b,
            *unaligned,
            *unaligned_both,
            min(lctx) if lctx else 1.0,
            float(ctx.mean()) if lctx else 1.0,
            float(sum(x < 0.8 for x in lctx)),
            max(ua / max(1, len(ab)), ub / max(1, len(bb))),
            min(ua / max(1, len(ab)), ub / max(1, len(bb))),
            max(ua, ub),
            jac,
            min(na, nb) / max(na, nb),
            float(np.log(na + nb)),
            *(float(g in guard_names) for g in SOFT_GUARDS),
            marker,
            float(an_a.negated != an_b.negated),
            float(corr_b and not corr_a),
            float(_inversions(an_a.words, an_b.words)),
            float(ub > 0 and ua == 0),
            float(ua > 0 and ub == 0),
            *(float(g in hard_names) for g in HARD_GUARDS),
            float(len(subs)),
            subst_align,
            bigram_jac,
            float(len(keys_a - keys_b)),
            float(len(keys_b - keys_a)),
            float(upd_b),
            float(len(gtext.antonym_pairs(an_a.words, an_b.words))),
            float(judge_shapes.swapped_in_same_bag(an_a.content_words, an_b.content_words)),
            float(rev_b and not rev_a),
            float(flips),
            float(flips > 0 and an_a.negated == an_b.negated),
            float(judge_shapes.negated_asserted(text_a, text_b)),
            *judge_shapes.diff_positions(text_a, text_b),
            float(judge_shapes.clause_moved(an_a.words, an_b.words)),
            # "never X" / "X is off limits": a negator and a word of prohibition agree.
            float((an_a.negated != prohibits(text_a)) != (an_b.negated != prohibits(text_b))),
            *judge_mid.stats(alignment.mid_content),
            *judge_mid.stats(alignment.mid_any),
        ],
        dtype=np.float64,
    )
    unaligned_a = tuple(w for w, s in zip(alignment.a_words, la, strict=True) if s < mid)
    return PairFeatures(
        values,
        hard,
        soft,
        unaligned_a,
        tuple(w for w, s in zip(alignment.b_words, lb, strict=True) if s < mid),
        len(ab),
        len(bb),
        code_name_replaced(text_a, text_b, an_a, an_b, {word_key(w) for w in unaligned_a}),
        name_forbidden(text_a, text_b, an_a, an_b),
        chg_b and not chg_a,
        alignment,
    )

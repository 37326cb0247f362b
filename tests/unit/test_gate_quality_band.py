"""`memsieve calibrate` scores the update band as the gate decides it: past the threshold, a
pair in the judge's band is a conflict or an insert, never a supersede (not even for a
correction); past the band nothing is judged."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from memsieve.gate.decide import Candidate, Incoming
from memsieve.gate.judge import Judgement, Verdict
from memsieve.ops import gate_quality as gq

# Unit vectors at a chosen cosine distance from A.
A = np.array([1.0, 0.0])
VECS = {
    "live": A,
    "near": np.array([0.9, np.sqrt(1 - 0.81)]),  # distance 0.10: under 0.40
    "band": np.array([0.55, np.sqrt(1 - 0.55**2)]),  # 0.45: in the band
    "far": np.array([0.2, np.sqrt(1 - 0.04)]),  # 0.80: past it
}


class Embedder:
    model = "all-MiniLM-L6-v2"  # threshold 0.40
    dims = 2
    max_batch = 16

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        return [VECS[t] for t in texts]


class Says:
    name = "says"
    update_band = 0.15

    def __init__(self, verdict: Verdict) -> None:
        self.verdict, self.seen = verdict, 0

    def __call__(self, pairs: Sequence[tuple[Incoming, Candidate]]) -> list[Judgement]:
        self.seen += len(pairs)
        return [Judgement(self.verdict, 0.9, self.name, "x") for _ in pairs]


def _pairs(correction: bool) -> list[gq.LabelledPair]:
    return [
        gq.LabelledPair("live", b, "update", "update", correction=correction)
        for b in ("near", "band", "far")
    ]


def test_the_band_is_scored_as_a_conflict_and_never_as_a_supersede() -> None:
    for verdict, near, band in (
        (Verdict.SAME, "supersede", "conflict"),
        (Verdict.UPDATE, "conflict", "conflict"),
        (Verdict.DIFFERENT, "insert", "insert"),
    ):
        for correction in (False, True):
            judge = Says(verdict)
            q = gq.run(_pairs(correction), Embedder(), judge)  # type: ignore[arg-type]
            got = [o.action for o in q.outcomes]
            near_action = "supersede-update" if correction and near == "conflict" else near
            assert got == [near_action, band, "insert"], (verdict, correction)
            assert judge.seen == 2  # the far pair is never judged

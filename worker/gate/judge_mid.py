"""The pair classifier's middle-layer features: how each shared word's context changed.

The final layer of all-MiniLM-L6-v2 is trained for sentence meaning; a middle layer (the
graph's `mid_vectors`, `memsieve.embedders.minilm_graph.MID_LAYER`) keeps more of each word's
surroundings. Per word found on both sides (by the alignment's `same` matrix: keys,
initialisms), the best cosine of its middle-layer vector with its matches'; `stats`
summarises them as features. Their worth is measured, not argued: out of fold on the
training pairs they raise PAWS dev recall at 0.925 precision from 0.492 to 0.561
(docs/dedupe-quality.md, stop 40). They are no swap detector: "flights from Paris to Rome" /
"... from Rome to Paris" keeps every shared word above 0.98 there, while moving a clause
("On Tuesdays, flights ...") takes one to 0.89; the classifier weighs them with the rest.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Per kind of shared word (content words, every word): the lowest cosine, the mean, the mean
# of the two lowest, how many under 0.9 and under 0.8.
STATS = ("min", "mean", "low2", "below90", "below80")


def shared(
    mid_a: np.ndarray, mid_b: np.ndarray, content_a: Sequence[bool], same: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per word of `a` found in `b` (`same[i, j]`: word i of `a` is word j of `b`): the best
    cosine of its middle-layer unit vector with its matches' (content words, every word)."""
    found = np.flatnonzero(same.any(axis=1))
    if not len(found):
        return np.zeros(0), np.zeros(0)
    sims = mid_a[found] @ mid_b.T
    best = np.where(same[found], sims, -np.inf).max(axis=1).astype(np.float64)
    content = np.asarray(content_a, dtype=np.bool_)[found]
    return best[content], best


def stats(cosines: np.ndarray) -> list[float]:
    """STATS of one kind's cosines (none: as if every context agreed)."""
    if not len(cosines):
        return [1.0, 1.0, 1.0, 0.0, 0.0]
    low = np.sort(cosines)
    return [
        float(low[0]),
        float(cosines.mean()),
        float(low[:2].mean()),
        float((cosines < 0.9).sum()),
        float((cosines < 0.8).sum()),
    ]

"""Per-embedder, per-kind supersede thresholds (cosine distance), measured not guessed.

How each default was measured is in docs/dedupe-quality.md; re-measure with
`memsieve calibrate PAIRS_FILE` before changing one. Overrides, for operators, parsed and
validated once by memsieve.settings: `MEMSIEVE_THRESHOLD_<KIND>` (e.g.
MEMSIEVE_THRESHOLD_FAILURE=0.3) beats `MEMSIEVE_THRESHOLD`, which beats the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memsieve.settings import Settings

KINDS = ("retro", "correction", "failure", "pattern")

# all-MiniLM-L6-v2: on tests/data/eval_pairs.jsonl with the default guards, 0.40 is the
# loosest threshold whose supersede precision stays >= 0.9 (0.97; reworded repeats caught
# 90 %); on PAWS dev the guards hold precision at 0.92 at every threshold from 0.1 to 0.4.
# Rewordings of one lesson lie 0.03-0.44 apart; distinct facts about one component from
# 0.32. The eval set has no kind-specific pairs yet, so every kind shares the value.
# text-embedding-3-small: 0.08, the seed article's starting point (no API access here to
# measure; calibrate before relying on it). hashing-v1: the test embedder, measured on the
# eval set like MiniLM.
_TABLE: dict[str, dict[str, float]] = {
    "all-MiniLM-L6-v2": {"retro": 0.40, "correction": 0.40, "failure": 0.40, "pattern": 0.40},
    "text-embedding-3-small": {
        "retro": 0.08,
        "correction": 0.08,
        "failure": 0.08,
        "pattern": 0.08,
    },
    "hashing-v1": {"retro": 0.35, "correction": 0.35, "failure": 0.35, "pattern": 0.35},
}
# For a model not in the table: strict, so an unknown embedder keeps two rows, not one.
FALLBACK = 0.05


def threshold_for(model: str, kind: str, settings: Settings | None = None) -> float:
    """The supersede threshold for memories of `kind` embedded by `model`.

    `settings` carries the operator's overrides (None: the measured table alone).
    """
    if settings is not None:
        if kind in settings.kind_thresholds:
            return settings.kind_thresholds[kind]
        if settings.threshold is not None:
            return settings.threshold
    # hashing-v1-384 and hashing-v1-64 share one entry.
    family = "hashing-v1" if model.startswith("hashing-v1") else model
    table = _TABLE.get(family)
    if table is None:
        return FALLBACK
    return table.get(kind, min(table.values()))

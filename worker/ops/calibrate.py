"""Calibrate the dedupe gate on labelled pairs: precision and recall of 'supersede'.

For each pair (a, b, same) the first text plays the live memory and the second the incoming
event; the real `decide` runs with the given guards at every threshold. A positive
prediction is a supersede (or a merge of byte-identical text); a positive label is `same`.
Precision is the share of supersedes that were right (a false one hides a distinct fact);
recall is the share of true repeats caught (a missed one feeds the duplicate spiral).

Pure apart from reading the pairs file and calling the embedder it is given. The counts,
the recommendation and the report live in ops/calibrate_report.py.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from memsieve.embedders.base import Embedder
from memsieve.gate.decide import Candidate, GateDecision, Guard, Incoming, decide
from memsieve.ops.calibrate_report import (
    RECALL_TIE,
    CategoryStats,
    Report,
    Row,
    format_report,
    recommend,
    report_to_json,
)

__all__ = [
    "DEFAULT_THRESHOLDS",
    "RECALL_TIE",
    "CategoryStats",
    "Pair",
    "Report",
    "Row",
    "cosine_distances",
    "embed_all",
    "evaluate",
    "format_report",
    "gate_pair",
    "load_pairs",
    "recommend",
    "report_to_json",
    "run_calibration",
]

DEFAULT_THRESHOLDS: tuple[float, ...] = tuple(round(0.02 * i, 2) for i in range(1, 26))


@dataclass(frozen=True)
class Pair:
    """One labelled pair: `a` is the live memory, `b` the incoming text."""

    a: str
    b: str
    same: bool
    category: str = ""
    # b is a correction that names a (the producer's explicit target).
    correction: bool = False


def load_pairs(path: str | Path, limit: int | None = None) -> list[Pair]:
    """Read PAWS TSV (id, s1, s2, label) or JSON lines ({"a", "b", "same" or "label",
    "category"?})."""
    path = Path(path)
    pairs: list[Pair] = []
    with path.open(newline="", encoding="utf-8") as fh:
        first = fh.readline()
        fh.seek(0)
        if first.lstrip().startswith("{"):
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                    # A three-way label (same / update / different): only "same" is a repeat.
                    same = (
                        bool(obj["same"])
                        if "same" in obj
                        else str(obj["label"]).strip().lower() == "same"
                    )
                    pairs.append(
                        Pair(
                            str(obj["a"]),
                            str(obj["b"]),
                            same,
                            str(obj.get("category", "")),
                            bool(obj.get("correction", False)),
                        )
                    )
                except (ValueError, KeyError, TypeError) as exc:
                    raise ValueError(f"{path}:{n}: not a pair: {exc}") from None
                if limit is not None and len(pairs) >= limit:
                    break
        else:
            for n, rec in enumerate(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE), 1):
                if not rec:
                    continue
                if len(rec) != 4 or rec[3].strip() not in ("0", "1"):
                    if n == 1 and rec[-1].strip() == "label":
                        continue  # a header line
                    raise ValueError(f"{path}:{n}: expected id, sentence1, sentence2, label")
                same = rec[3].strip() == "1"
                pairs.append(Pair(rec[1], rec[2], same, "paraphrase" if same else "swap"))
                if limit is not None and len(pairs) >= limit:
                    break
    return pairs


def embed_all(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Embed each distinct text once, in batches of the embedder's size; rows are unit vectors."""
    unique = list(dict.fromkeys(texts))
    vectors: dict[str, np.ndarray] = {}
    step = max(1, embedder.max_batch)
    for i in range(0, len(unique), step):
        batch = unique[i : i + step]
        for text, vec in zip(batch, embedder.embed(batch), strict=True):
            vectors[text] = np.asarray(vec, dtype=np.float64)
    return np.stack([vectors[t] for t in texts]) if texts else np.zeros((0, embedder.dims))


def cosine_distances(pairs: Sequence[Pair], embedder: Embedder) -> list[float]:
    """1 - cosine similarity of each pair under `embedder`."""
    if not pairs:
        return []
    mat = embed_all(embedder, [p.a for p in pairs] + [p.b for p in pairs])
    a, b = mat[: len(pairs)], mat[len(pairs) :]
    sims = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return [float(1.0 - s) for s in sims]


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def gate_pair(
    pair: Pair,
    distance: float,
    threshold: float,
    guards: Sequence[Guard],
    kind: str = "pattern",
) -> GateDecision:
    """Run the real gate on one pair: `a` is the only live candidate, `b` the incoming event."""
    candidate = Candidate("memory-a", kind, "", pair.a, _hash(pair.a), distance)
    incoming = Incoming(
        "calibration",
        kind,
        "",
        pair.b,
        _hash(pair.b),
        target_memory_id="memory-a" if pair.correction else None,
    )
    return decide(incoming, [candidate], threshold, tuple(guards))


def evaluate(
    pairs: Sequence[Pair],
    distances: Sequence[float],
    thresholds: Sequence[float],
    guards: Sequence[Guard],
    kind: str = "pattern",
    target_precision: float = 0.9,
) -> tuple[list[Row], float | None, list[CategoryStats], dict[str, int]]:
    """Gate every pair at every threshold; returns rows, recommendation, categories, vetoes."""
    thresholds = sorted(thresholds)
    rows = [Row(t, 0, 0, 0, 0) for t in thresholds]
    # decisions[i][j]: pair i superseded at threshold j; vetoed[i][j]: stopped by a guard.
    decisions: list[list[bool]] = []
    vetoed: list[list[bool]] = []
    veto_counts: dict[str, int] = {}
    for pair, dist in zip(pairs, distances, strict=True):
        dec_row, veto_row = [], []
        for j, t in enumerate(thresholds):
            d = gate_pair(pair, dist, t, guards, kind)
            hit = d.action in ("supersede", "merge")
            dec_row.append(hit)
            veto_row.append(any(c.vetoes for c in d.considered))
            cosine_hit = d.action == "merge" or dist < t or pair.correction
            row = rows[j]
            if pair.same:
                row.tp += hit
                row.fn += not hit
                row.cosine_tp += cosine_hit
            else:
                row.fp += hit
                row.tn += not hit
                row.cosine_fp += cosine_hit
            if j == len(thresholds) - 1:
                for c in d.considered:
                    for name in {v.guard for v in c.vetoes}:
                        veto_counts[name] = veto_counts.get(name, 0) + 1
        decisions.append(dec_row)
        vetoed.append(veto_row)

    best = recommend(rows, target_precision)
    j = thresholds.index(best) if best is not None else len(thresholds) // 2
    by_cat: dict[tuple[str, bool], CategoryStats] = {}
    for i, pair in enumerate(pairs):
        key = (pair.category or ("same" if pair.same else "different"), pair.same)
        stats = by_cat.setdefault(key, CategoryStats(key[0], key[1], 0, 0, 0))
        stats.pairs += 1
        stats.superseded += decisions[i][j]
        stats.vetoed += vetoed[i][j]
    categories = sorted(by_cat.values(), key=lambda c: (not c.label, c.category))
    return rows, best, categories, veto_counts


def run_calibration(
    pairs: Sequence[Pair],
    embedder: Embedder,
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
    guards: Sequence[Guard] = (),
    kind: str = "pattern",
    target_precision: float = 0.9,
) -> Report:
    """Embed the pairs with `embedder`, gate them at each threshold, and summarise."""
    import time

    start = time.perf_counter()
    distances = cosine_distances(pairs, embedder)
    embedded = time.perf_counter()
    rows, best, categories, vetoes = evaluate(
        pairs, distances, thresholds, guards, kind, target_precision
    )
    return Report(
        model=embedder.model,
        kind=kind,
        pairs=len(pairs),
        positives=sum(p.same for p in pairs),
        target_precision=target_precision,
        rows=rows,
        recommended=best,
        categories=categories,
        veto_counts=vetoes,
        embed_seconds=embedded - start,
        gate_seconds=time.perf_counter() - embedded,
    )

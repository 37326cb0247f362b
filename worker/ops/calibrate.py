"""Calibrate the dedupe gate on labelled pairs: precision and recall of 'supersede'.

For each pair (a, b, same) the first text plays the live memory and the second the incoming
event; the real `decide` runs with the given guards at every threshold. A positive
prediction is a supersede (or a merge of byte-identical text); a positive label is `same`.
Precision is the share of supersedes that were right (a false one hides a distinct fact);
recall is the share of true repeats caught (a missed one feeds the duplicate spiral).

Pure apart from reading the pairs file and calling the embedder it is given.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from memsieve.embedders.base import Embedder
from memsieve.gate.decide import Candidate, GateDecision, Guard, Incoming, decide

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


@dataclass
class Row:
    """Counts for one threshold."""

    threshold: float
    tp: int
    fp: int
    fn: int
    tn: int
    # The same threshold with no guards: what cosine distance alone would do.
    cosine_tp: int = 0
    cosine_fp: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def cosine_precision(self) -> float:
        n = self.cosine_tp + self.cosine_fp
        return self.cosine_tp / n if n else 1.0

    @property
    def cosine_recall(self) -> float:
        pos = self.tp + self.fn
        return self.cosine_tp / pos if pos else 0.0


@dataclass
class CategoryStats:
    """At the recommended threshold: how many pairs of a category the gate superseded."""

    category: str
    label: bool
    pairs: int
    superseded: int
    vetoed: int  # within the threshold but stopped by a guard

    @property
    def correct(self) -> int:
        return self.superseded if self.label else self.pairs - self.superseded


@dataclass
class Report:
    """Everything one calibration run measured."""

    model: str
    kind: str
    pairs: int
    positives: int
    target_precision: float
    rows: list[Row]
    recommended: float | None
    categories: list[CategoryStats] = field(default_factory=list)
    veto_counts: dict[str, int] = field(default_factory=dict)
    embed_seconds: float = 0.0
    gate_seconds: float = 0.0

    def row(self, threshold: float) -> Row:
        """The row measured at `threshold` (exact match, rounded to 4 places)."""
        for r in self.rows:
            if round(r.threshold, 4) == round(threshold, 4):
                return r
        raise KeyError(threshold)


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


# Recall within this much of the best counts as a tie, and a tie goes to the stricter
# threshold: a looser one buys a sliver of recall with false supersedes.
RECALL_TIE = 0.01


def recommend(rows: Iterable[Row], target_precision: float) -> float | None:
    """The strictest threshold whose precision reaches the target and whose recall is within
    RECALL_TIE of the best such recall; None when no threshold reaches the target."""
    ok = [r for r in rows if r.tp and r.precision >= target_precision]
    if not ok:
        return None
    best = max(r.recall for r in ok)
    return min(r.threshold for r in ok if r.recall >= best - RECALL_TIE)


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


def format_report(report: Report) -> str:
    """A plain-text table: one line per threshold, then the categories at the recommendation."""
    lines = [
        f"model {report.model}  kind {report.kind}  pairs {report.pairs}"
        f"  (same {report.positives}, different {report.pairs - report.positives})",
        f"embed {report.embed_seconds:.1f}s  gate {report.gate_seconds:.1f}s",
        "",
        "threshold  precision  recall     F1   supersedes  false   | cosine alone: precision  recall",
    ]
    for r in report.rows:
        mark = "  <- recommended" if r.threshold == report.recommended else ""
        lines.append(
            f"{r.threshold:9.3f}  {r.precision:9.3f}  {r.recall:6.3f}  {r.f1:5.3f}"
            f"  {r.tp + r.fp:10d}  {r.fp:5d}   |               {r.cosine_precision:9.3f}"
            f"  {r.cosine_recall:6.3f}{mark}"
        )
    lines.append("")
    if report.recommended is None:
        lines.append(
            f"no threshold reaches precision {report.target_precision:.2f}; "
            "keep the current one and review the guards"
        )
    else:
        r = report.row(report.recommended)
        lines.append(
            f"recommended threshold {report.recommended:.3f}: precision {r.precision:.3f},"
            f" recall {r.recall:.3f} (target precision {report.target_precision:.2f})"
        )
    if report.categories:
        at = "recommended" if report.recommended is not None else "middle"
        lines += [
            "",
            f"by category at the {at} threshold:",
            "category                  label  pairs  superseded  vetoed  correct",
        ]
        for c in report.categories:
            lines.append(
                f"{c.category:24s}  {'same' if c.label else 'diff':5s}  {c.pairs:5d}"
                f"  {c.superseded:10d}  {c.vetoed:6d}  {c.correct / c.pairs:7.1%}"
            )
    if report.veto_counts:
        lines += ["", "vetoes at the loosest threshold, by guard:"]
        for name, n in sorted(report.veto_counts.items(), key=lambda kv: -kv[1]):
            lines.append(f"  {name:16s} {n}")
    return "\n".join(lines)


def report_to_json(report: Report) -> str:
    """The report as JSON, with derived precision / recall / F1 on every row."""
    data = asdict(report)
    for row, obj in zip(report.rows, data["rows"], strict=True):
        obj.update(
            precision=row.precision,
            recall=row.recall,
            f1=row.f1,
            cosine_precision=row.cosine_precision,
            cosine_recall=row.cosine_recall,
        )
    for cat, obj in zip(report.categories, data["categories"], strict=True):
        obj["correct"] = cat.correct
    return json.dumps(data, indent=2)

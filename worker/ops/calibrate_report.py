"""A calibration's measurements and its report: counts per threshold, the recommended
threshold, and the plain-text and JSON forms (the sweep itself is ops/calibrate.py)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field


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

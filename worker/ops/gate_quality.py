"""The gate's judgement on labelled pairs: precision / recall of supersede, per-category errors.

Used by `python -m bench.gate_quality PAIRS_FILE` and `memsieve calibrate PAIRS_FILE`.

PAIRS_FILE: JSON lines with `a` (the live memory), `b` (the incoming text) and either a
three-way `label` (same / update / different) or a boolean `same`, optionally `category`
and `b_kind` (the incoming memory's kind; `correction` marks a correction); or PAWS TSV.

Each pair goes through what the gate does with one live candidate: byte-identical text ->
merge; cosine distance at or over the kind's threshold -> insert; otherwise the judge's
verdict (SAME -> supersede, UPDATE -> conflict, or a supersede with reason `update` for a
correction, DIFFERENT -> insert). A positive prediction is a supersede as a duplicate (or a
merge); a positive label is `same`. Printed: precision, recall, F1, the verdicts of the
update pairs, false supersedes on number / id / date traps, and errors by category.

Measure held-out files (tests/data/gate_pairs_frozen_test.jsonl, PAWS test, frozen2) once,
with the final configuration; tune on training data only (scripts/train_judge.py).
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsieve.embedders.base import Embedder
from memsieve.gate import thresholds

if TYPE_CHECKING:
    from memsieve.gate.judge import Judge


@dataclass
class LabelledPair:
    a: str
    b: str
    label: str  # same | update | different
    category: str
    kind: str = "pattern"
    correction: bool = False


@dataclass
class Outcome:
    pair: LabelledPair
    distance: float
    action: str  # merge | supersede | supersede-update | conflict | insert
    verdict: str  # same | update | different | far (over the threshold) | identical
    judge: str
    detail: str


@dataclass
class Quality:
    """Counts of one run."""

    source: str
    model: str
    judge: str
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def tp(self) -> int:
        return sum(o.pair.label == "same" and _dup(o) for o in self.outcomes)

    @property
    def fp(self) -> int:
        return sum(o.pair.label != "same" and _dup(o) for o in self.outcomes)

    @property
    def positives(self) -> int:
        return sum(o.pair.label == "same" for o in self.outcomes)

    @property
    def precision(self) -> float:
        n = self.tp + self.fp
        return self.tp / n if n else 1.0

    @property
    def recall(self) -> float:
        return self.tp / self.positives if self.positives else 0.0


def _dup(o: Outcome) -> bool:
    return o.action in ("merge", "supersede")


def load(path: str | Path, limit: int | None = None) -> list[LabelledPair]:
    """Labelled pairs from JSON lines (three-way `label` or boolean `same`) or PAWS TSV."""
    pairs = _load(path)
    return pairs if limit is None else pairs[:limit]


def _load(path: str | Path) -> list[LabelledPair]:
    from memsieve.ops.calibrate import load_pairs

    p = Path(path)
    first = p.open(encoding="utf-8").readline()
    if not first.lstrip().startswith("{"):
        return [
            LabelledPair(x.a, x.b, "same" if x.same else "different", x.category)
            for x in load_pairs(p)
        ]
    out = []
    for n, line in enumerate(p.open(encoding="utf-8"), 1):
        if not line.strip():
            continue
        o = json.loads(line)
        if "label" in o:
            label = str(o["label"]).strip().lower()
        else:
            label = "same" if o["same"] else "different"
        if label not in ("same", "update", "different"):
            raise ValueError(f"{path}:{n}: label must be same/update/different, got {label!r}")
        b_kind = str(o.get("b_kind") or "pattern")
        kind = b_kind if b_kind in thresholds.KINDS else "pattern"
        correction = b_kind == "correction" or bool(o.get("correction"))
        if o.get("correction") and label == "same" and o.get("category") == "update_targeted":
            label = "update"  # the old set's "update named by a correction"
        out.append(
            LabelledPair(o["a"], o["b"], label, str(o.get("category", "")), kind, correction)
        )
    return out


def run(pairs: Sequence[LabelledPair], embedder: Embedder, judge: Judge) -> Quality:
    """Gate every pair (one live candidate each) with `embedder`'s distances and `judge`."""
    import hashlib

    from memsieve.gate import judge as gjudge
    from memsieve.gate.decide import Candidate, Incoming
    from memsieve.ops.calibrate import Pair, cosine_distances

    start = time.perf_counter()
    dist = cosine_distances([Pair(p.a, p.b, p.label == "same") for p in pairs], embedder)
    q = Quality("", embedder.model, str(getattr(judge, "name", type(judge).__name__)))

    def h(t: str) -> str:
        return hashlib.sha256(t.encode("utf-8")).hexdigest()

    todo: list[int] = []
    outcomes: list[Outcome | None] = [None] * len(pairs)
    from memsieve.gate.decide import links_far, update_band

    thr_of = [thresholds.threshold_for(embedder.model, p.kind) for p in pairs]
    for i, (p, d) in enumerate(zip(pairs, dist, strict=True)):
        thr = thr_of[i]
        band = update_band(judge, Incoming("quality", p.kind, "", p.b, ""))
        if p.a == p.b:
            outcomes[i] = Outcome(p, 0.0, "merge", "identical", "hash", "byte-identical")
        elif d >= thr + band:
            outcomes[i] = Outcome(p, d, "insert", "far", "distance", f"{d:.3f} >= {thr:.2f}")
        else:
            todo.append(i)
    inputs = [
        (
            Incoming("quality", pairs[i].kind, "", pairs[i].b, h(pairs[i].b)),
            Candidate("memory", pairs[i].kind, "", pairs[i].a, h(pairs[i].a), dist[i]),
        )
        for i in todo
    ]
    for start_at in range(0, len(inputs), 256):
        chunk = todo[start_at : start_at + 256]
        verdicts = judge(inputs[start_at : start_at + 256])
        for i, j in zip(chunk, verdicts, strict=True):
            p = pairs[i]
            if dist[i] >= thr_of[i]:
                # Past the threshold, in the judge's update band: a conflict or nothing
                # (memsieve.gate.decide).
                far = links_far(j)
                action = "conflict" if far else "insert"
                outcomes[i] = Outcome(
                    p, dist[i], action, "update" if far else "far", j.judge, j.detail
                )
                continue
            if j.verdict == gjudge.Verdict.SAME:
                action = "supersede"
            elif j.verdict == gjudge.Verdict.UPDATE:
                action = "supersede-update" if p.correction else "conflict"
            else:
                action = "insert"
            outcomes[i] = Outcome(p, dist[i], action, str(j.verdict), j.judge, j.detail)
    q.outcomes = [o for o in outcomes if o is not None]
    q.seconds = time.perf_counter() - start
    return q


JUDGES = ("default", "guards", "classifier")


def make_judge(name: str, embedder_model: str = "all-MiniLM-L6-v2") -> Judge:
    """A judge by name: the default one, the guards alone, or the trained classifier."""
    from memsieve.gate import judge as gjudge

    if name == "guards":
        return gjudge.guard_judge()
    if name == "default":
        return gjudge.default_judge(embedder_model=embedder_model)
    if name == "classifier":
        from memsieve.gate.judge import env_settings
        from memsieve.gate.judge_classifier import classifier_judge

        # MEMSIEVE_UPDATE_BAND applies here as in the service.
        settings = env_settings()
        band = settings.update_band if settings is not None else 0.0
        return classifier_judge(embedder_model, update_band=band)
    raise ValueError(f"unknown judge {name!r}")


TRAPS = ("number", "id", "date")


_TRAP_WORDS = {
    "number": {"number", "numbers", "numeric"},
    "id": {"id", "ids", "identifier", "identifiers"},
    "date": {"date", "dates"},
}


def is_trap(category: str, kind: str) -> bool:
    """A category naming a number / id / date trap ("trap_number", "id-trap", ...)."""
    return bool(set(re.split(r"[^a-z]+", category.lower())) & _TRAP_WORDS[kind])


def format_quality(q: Quality, show_errors: int = 10) -> str:
    lines = [
        f"{q.source}: {len(q.outcomes)} pairs, model {q.model}, judge {q.judge}, {q.seconds:.1f}s",
        f"supersede precision {q.precision:.3f}  recall {q.recall:.3f}  "
        f"(supersedes {q.tp + q.fp}, false {q.fp}, same pairs {q.positives})",
    ]
    updates = [o for o in q.outcomes if o.pair.label == "update"]
    if updates:
        c = Counter(o.action for o in updates)
        ok = c["conflict"] + c["supersede-update"]
        lines.append(
            f"update pairs {len(updates)}: conflict {c['conflict']}, supersede-update "
            f"{c['supersede-update']}, supersede-as-duplicate {c['supersede'] + c['merge']}, "
            f"silent second row {c['insert']}  (handled as updates {ok}/{len(updates)})"
        )
    for trap in TRAPS:
        rows = [o for o in q.outcomes if o.pair.label != "same" and is_trap(o.pair.category, trap)]
        if rows:
            fp = sum(_dup(o) for o in rows)
            lines.append(f"{trap} traps: {len(rows)} pairs, false supersedes {fp}")
    by_cat: dict[str, list[Outcome]] = defaultdict(list)
    for o in q.outcomes:
        by_cat[o.pair.category or o.pair.label].append(o)
    lines += ["", "category                      label      pairs  errors  superseded  conflict"]
    errors: list[Outcome] = []
    for cat in sorted(by_cat):
        rows = by_cat[cat]
        errs = [o for o in rows if _is_error(o)]
        errors += errs
        labels = "/".join(sorted({o.pair.label for o in rows}))
        lines.append(
            f"{cat[:28]:28s}  {labels[:9]:9s}  {len(rows):5d}  {len(errs):6d}"
            f"  {sum(_dup(o) for o in rows):10d}  {sum(o.action == 'conflict' for o in rows):8d}"
        )
    if show_errors and errors:
        lines += ["", f"first {min(show_errors, len(errors))} of {len(errors)} errors:"]
        for o in errors[:show_errors]:
            lines.append(
                f"  [{o.pair.category}/{o.pair.label} -> {o.action}, d={o.distance:.3f}] "
                f"{o.pair.a!r} | {o.pair.b!r} ({o.detail[:120]})"
            )
    return "\n".join(lines)


def _is_error(o: Outcome) -> bool:
    if o.pair.label == "same":
        return not _dup(o)
    if o.pair.label == "update":
        return o.action not in ("conflict", "supersede-update")
    return _dup(o)


def to_json(q: Quality) -> dict[str, Any]:
    return {
        "source": q.source,
        "model": q.model,
        "judge": q.judge,
        "pairs": len(q.outcomes),
        "precision": round(q.precision, 4),
        "recall": round(q.recall, 4),
        "tp": q.tp,
        "fp": q.fp,
        "actions": dict(Counter(o.action for o in q.outcomes)),
    }

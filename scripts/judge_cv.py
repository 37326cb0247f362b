"""Grouped k-fold cross-validation of the gate's judges on the TRAINING data only.

    . .venv/bin/activate && python scripts/judge_cv.py [--folds 5] [--candidates ...]

Training sources (never a held-out split, never PAWS test):
  eval    tests/data/eval_pairs.jsonl
  frozen1 tests/data/gate_pairs_frozen_test.jsonl (measured once; a training set since)
  train4  tests/data/gate_pairs_train4.jsonl (when present)
  train5  tests/data/gate_pairs_train5.jsonl (when present)
  frozen3 tests/data/gate_pairs_frozen3.jsonl (held out once; retired to training)
  frozen4 tests/data/gate_pairs_frozen4.jsonl (held out once; retired to training)
  frozen5..frozen7 tests/data/gate_pairs_frozen{5,6,7}.jsonl (held out once; retired, stop 24)
  train6  tests/data/gate_pairs_train6.jsonl (training, stop 24)
  frozen8 tests/data/gate_pairs_frozen8.jsonl (held out in stop 24; retired, stop 25)
  frozen9..frozen13 tests/data/gate_pairs_frozen{9..13}.jsonl (held out in stops 25-28; retired, stop 30)
  train7  tests/data/gate_pairs_train7.jsonl (training, stop 31: role swaps, renamed entities)
  paws    every --paws-every'th pair of PAWS-Wiki dev

Folds are grouped: pairs that share a text (after folding case and space) are one group, so
no fact sits in both the training and the test fold. Every candidate is scored like
`memsieve.ops.gate_quality.run` scores the gate: byte-identical -> merge, distance at or over
the kind's threshold -> insert, else the judge's verdict (same -> supersede, update -> conflict
or, for a correction, a supersede with reason `update`). Printed per source: supersede
precision / recall (recall over every `same` pair, including far or hard-vetoed ones), false
supersedes on number / id / date traps, update pairs handled as updates, and different-fact pairs
linked as conflicts (false conflicts: both rows stay live, marked as contradicting).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from judge_data import (  # noqa: E402 - scripts/ on the path first
    PAWS_WEIGHT,
    CachedEncoder,
    Item,
    embed_and_encode,
    fold_of,
    groups,
    load_items,
)


@dataclass
class Scores:
    tp: int = 0
    fp: int = 0
    pos: int = 0
    traps: Counter | None = None  # type: ignore[type-arg]
    updates: int = 0
    updates_ok: int = 0
    updates_dup: int = 0
    false_conflicts: int = 0
    different: int = 0

    def line(self) -> str:
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0
        r = self.tp / self.pos if self.pos else 0.0
        traps = self.traps or Counter()
        upd = f"{self.updates_ok}/{self.updates}" if self.updates else "-"
        return (
            f"{p:.3f} / {r:.3f} (fp {self.fp:3d}; traps n/i/d {traps['number']}/{traps['id']}/"
            f"{traps['date']}; updates {upd}, as dup {self.updates_dup}; false conflicts "
            f"{self.false_conflicts}/{self.different})"
        )


def score(items: list[Item], actions: list[str]) -> dict[str, Scores]:
    out: dict[str, Scores] = {}
    for it, act in zip(items, actions, strict=True):
        s = out.setdefault(it.source, Scores(traps=Counter()))
        dup = act in ("merge", "supersede")
        s.pos += it.label == "same"
        s.tp += dup and it.label == "same"
        if dup and it.label != "same":
            s.fp += 1
            for t in ("number", "id", "date"):
                if it.category == f"trap_{t}":
                    s.traps[t] += 1  # type: ignore[index]
        if it.label == "update":
            s.updates += 1
            s.updates_ok += act in ("conflict", "supersede-update")
            s.updates_dup += dup
        if it.label == "different":
            s.different += 1
            s.false_conflicts += act in ("conflict", "supersede-update")
    return out


CUTS = (0.5, 0.7, 0.8, 0.9)


def _errors(items, actions, dist, p_same, p_upd, judged) -> None:  # type: ignore[no-untyped-def]
    ps = dict(zip(judged, p_same, strict=True))
    pu = dict(zip(judged, p_upd, strict=True))
    for i, (it, a) in enumerate(zip(items, actions, strict=True)):
        if it.source == "paws":
            continue
        dup = a in ("merge", "supersede")
        ok = (it.label == "same") == dup and (
            it.label != "update" or a in ("conflict", "supersede-update")
        )
        if not ok:
            print(
                f"ERR {it.source} {it.category} {it.label}->{a} d={dist[i]:.2f} "
                f"ps={ps.get(i, -1):.2f} pu={pu.get(i, -1):.2f}\n   A: {it.a}\n   B: {it.b}"
            )


def _print(title: str, scores: dict[str, Scores]) -> None:
    print(f"\n{title}")
    for source, s in sorted(scores.items()):
        print(f"  {source:8s} {s.line()}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--paws-every", type=int, default=1)
    ap.add_argument("--paws-dev", default=str(ROOT.parent / "shared/data/paws/paws_wiki_dev.tsv"))
    ap.add_argument("--cache-dir", default="/tmp")
    ap.add_argument("--paws-weight", type=float, default=PAWS_WEIGHT)
    ap.add_argument("--candidates", default="guards,classifier")
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("--errors", action="store_true", help="print the errors at the chosen cut")
    ap.add_argument(
        "--update-cut",
        type=float,
        default=None,
        help="score at this cut of P(update) (the shipped weights' update_cut) instead of the "
        "one chosen out of fold",
    )
    ap.add_argument("--extra", action="append", default=[], help="SOURCE=PATH, training only")
    args = ap.parse_args()

    import train_judge
    from memsieve.gate import judge as gjudge
    from memsieve.gate import thresholds

    extra = [(s.split("=", 1)[0], Path(s.split("=", 1)[1])) for s in args.extra]
    items = load_items(args.paws_every, Path(args.paws_dev), extra, args.paws_weight)
    model, dist, words = embed_and_encode(items, Path(args.cache_dir))
    grp = groups(items)
    folds = fold_of(grp, args.folds)
    print(f"{len(items)} pairs, {len(set(grp))} groups:", dict(Counter(i.source for i in items)))

    thr = np.array([thresholds.threshold_for(model, it.kind) for it in items])
    judged = [i for i, it in enumerate(items) if it.a != it.b and dist[i] < thr[i]]
    base = ["merge" if it.a == it.b else "insert" for it in items]

    def act(i: int, verdict: str) -> str:
        if verdict == "same":
            return "supersede"
        if verdict == "update":
            return "supersede-update" if items[i].correction else "conflict"
        return "insert"

    from memsieve.gate.judge_classifier import pair_inputs

    inputs = pair_inputs([(items[i].a, items[i].b, float(dist[i])) for i in judged])
    from memsieve.gate.guards import default_guards
    from memsieve.gate.judge_classifier import alignments, features_from
    from memsieve.gate.judge_features import FEATURE_NAMES

    feats = features_from(inputs, alignments(inputs, CachedEncoder(words)), default_guards())
    jac = np.array([f.values[FEATURE_NAMES.index("jaccard")] for f in feats])
    for name in args.candidates.split(","):
        actions = list(base)
        if name == "guards":
            verdicts = gjudge.guard_judge()(inputs)
            for i, j in zip(judged, verdicts, strict=True):
                actions[i] = act(i, str(j.verdict))
            _print(name, score(items, actions))
            continue
        p_same, p_upd = train_judge.cross_validate(
            name, items, judged, inputs, CachedEncoder(words), folds, args.folds
        )
        label = np.array([items[i].label for i in judged])
        src = np.array([items[i].source for i in judged])
        cut, ocut, ucut = train_judge.cuts_for(p_same, p_upd, label, src, args.target, jac)
        high = jac >= train_judge.OVERLAP_FROM
        if args.update_cut is not None:
            ucut = args.update_cut
        for c in dict.fromkeys([cut, *CUTS]):
            # The chosen row applies the overlap cut as the judge does; the others one cut.
            cuts = np.where(high, max(c, ocut), c) if c == cut else np.full(len(judged), c)
            for i, ps, pu, ci in zip(judged, p_same, p_upd, cuts, strict=True):
                v = "same" if ps >= ci else ("update" if pu >= ucut else "different")
                actions[i] = act(i, v)
            mark = (
                f" (chosen; {ocut:.2f} from Jaccard {train_judge.OVERLAP_FROM})" if c == cut else ""
            )
            if c == cut and args.errors:
                _errors(items, actions, dist, p_same, p_upd, judged)
            _print(
                f"{name}, cut p(same) {c:.2f}{mark}, p(update) {ucut:.2f}", score(items, actions)
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

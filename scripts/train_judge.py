"""Train the gate's pair classifier on the TRAINING data only, and write its weights.

    . .venv/bin/activate && python scripts/train_judge.py [--out worker/gate/data/judge_classifier.json]

Training data (never a held-out split, never PAWS test), read by scripts/judge_data.py:
  - tests/data/eval_pairs.jsonl (the team's tuning set);
  - tests/data/gate_pairs_frozen_test.jsonl (measured once as a test split; training since);
  - tests/data/gate_pairs_train4.jsonl (three-way labels, written from category descriptions);
  - tests/data/gate_pairs_train5.jsonl (the same, by another engineer, 2026-12-01);
  - tests/data/gate_pairs_frozen3.jsonl ... gate_pairs_frozen7.jsonl (each held out for a
    round, measured on it, retired to training: a newer held-out split exists, never seen);
  - tests/data/gate_pairs_train6.jsonl (written for training, stop 24);
  - tests/data/gate_pairs_frozen8.jsonl (held out in stop 24, retired to training in stop 25);
  - tests/data/gate_pairs_frozen9.jsonl ... gate_pairs_frozen13.jsonl (held out in stops 25-28,
    retired to training in stop 30);
  - every pair of PAWS-Wiki dev (weight judge_data.PAWS_WEIGHT; Zhang, Baldridge and He,
    NAACL 2019, data by Google LLC).

Only pairs the judge sees are used: cosine distance under the embedder's threshold. Two small
perceptrons, each the mean of SEEDS perceptrons trained from other initial weights
(scikit-learn at training time; the judge runs them in numpy) or, with
`--model logistic`, two logistic regressions (numpy): P(same) over the pairs no hard guard
vetoes, and P(update | not same) over the three-way pairs that are not the same fact. The cut
of P(same) is the smallest whose out-of-fold supersede precision (grouped k-fold: pairs sharing
a text stay in one fold) reaches --target over the three-way sources together and 0.90 on
PAWS; pairs whose content words are nearly one set (PAWS' shape) get their own, higher cut,
the smallest at which PAWS dev reaches PAWS_MARGIN (`choose_overlap_cut`); the cut of
P(update) finds UPDATE_SHARE of the updates out of fold.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from judge_data import PAIR_SOURCES  # noqa: E402 - scripts/ on the path first


def fit_logistic(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float = 1.0, iters: int = 50
) -> np.ndarray:
    """Weighted L2 logistic regression by Newton's method (feature 0 is the bias, unpenalised)."""
    mu = np.zeros(x.shape[1])
    sd = np.ones(x.shape[1])
    mu[1:] = np.average(x[:, 1:], axis=0, weights=w)
    sd[1:] = np.sqrt(np.average((x[:, 1:] - mu[1:]) ** 2, axis=0, weights=w)) + 1e-6
    z = (x - mu) / sd
    z[:, 0] = 1.0
    beta = np.zeros(x.shape[1])
    pen = np.full(x.shape[1], l2)
    pen[0] = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-(z @ beta)))
        g = z.T @ (w * (p - y)) + pen * beta
        h = (z * (w * p * (1 - p))[:, None]).T @ z + np.diag(pen) + 1e-9 * np.eye(len(beta))
        step = np.linalg.solve(h, g)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    # Fold the standardisation into raw-feature weights.
    raw = beta / sd
    raw[0] = beta[0] - float(np.sum(beta[1:] * mu[1:] / sd[1:]))
    return raw


def predict(x: np.ndarray, beta: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(x @ beta)))


# Perceptrons averaged per head (see Fitted).
SEEDS = 5


class Fitted:
    """A trained model: its probabilities, and its weights as judge_classifier reads them."""

    def __init__(
        self,
        kind: str,
        x: np.ndarray,
        y: np.ndarray,
        w: np.ndarray,
        l2: float,
        hidden: int = 32,
        seed: int = 0,
    ) -> None:
        self.kind = kind
        if kind == "logistic":
            self.beta = fit_logistic(x, y, w, l2)
            return
        # scikit-learn is a training-time tool only: the judge runs the forward pass in numpy.
        from sklearn.neural_network import MLPClassifier

        self.mean = x.mean(axis=0)
        self.scale = x.std(axis=0) + 1e-6
        # An average of SEEDS perceptrons that differ only in their initial weights: one
        # perceptron's probabilities move by a few pairs between seeds; their mean does not.
        self.mlps = []
        for s in range(SEEDS):
            mlp = MLPClassifier(
                (hidden,), alpha=l2 * 1e-2, max_iter=3000, random_state=seed + s,
                early_stopping=False,
            )  # fmt: skip
            mlp.fit((x - self.mean) / self.scale, y, sample_weight=w)
            self.mlps.append(mlp)

    def p(self, x: np.ndarray) -> np.ndarray:
        if self.kind == "logistic":
            return predict(x, self.beta)
        z = (x - self.mean) / self.scale
        return np.mean([m.predict_proba(z)[:, 1] for m in self.mlps], axis=0)

    def to_obj(self) -> object:
        if self.kind == "logistic":
            return [round(float(v), 6) for v in self.beta]

        def r(a: np.ndarray) -> object:
            return np.round(a.astype(np.float64), 6).tolist()

        members = [
            {
                "kind": "mlp",
                "mean": r(self.mean),
                "scale": r(self.scale),
                "hidden_w": r(m.coefs_[0]),
                "hidden_b": r(m.intercepts_[0]),
                "out_w": r(m.coefs_[1][:, 0]),
                "out_b": round(float(m.intercepts_[1][0]), 6),
            }
            for m in self.mlps
        ]
        return members[0] if len(members) == 1 else {"kind": "mean", "members": members}


# Sources whose labels are three-way (an update is labelled as such): every agent-memory set.
THREE_WAY_SOURCES = tuple(name for name, _ in PAIR_SOURCES)
# Supersede precision each source must keep (out of fold) for a cut of P(same) to be chosen.
TARGETS = {"paws": 0.90}


def choose_same_cut(p: np.ndarray, y: np.ndarray, src: np.ndarray, target: float) -> float:
    """The smallest cut of P(same) whose precision reaches the target on every source."""
    for c in np.arange(0.30, 0.99, 0.01):
        ok = True
        for s in set(src):
            m = (src == s) & (p >= c)
            if m.sum() and y[m].mean() < TARGETS.get(s, target):
                ok = False
        if ok:
            return float(round(c, 2))
    return 0.99


# The overlap cut (`memsieve.gate.judge_weights.Weights.overlap_from`): pairs whose content
# words are nearly one set (Jaccard >= OVERLAP_FROM), PAWS' shape, where a swap of two words
# changes the fact and the agent sets have few pairs (a fifth of their judged ones). Their cut
# rises until PAWS dev, out of fold, reaches PAWS_MARGIN over all its pairs: in the stops
# 30-35 retrains dev's out-of-fold precision ran 0.02-0.03 above PAWS test's at the same cut
# (docs/dedupe-quality.md), so 0.90 on dev was 0.876-0.882 on test.
OVERLAP_FROM = 0.8
PAWS_MARGIN = 0.925


def choose_overlap_cut(
    p: np.ndarray, y: np.ndarray, src: np.ndarray, jac: np.ndarray, cut: float, target: float
) -> float:
    """The smallest cut (from `cut` up) of P(same) for the high-overlap pairs at which PAWS
    reaches PAWS_MARGIN and the three-way sources together still reach `target`."""
    high = jac >= OVERLAP_FROM
    three = np.isin(src, THREE_WAY_SOURCES)
    for c in np.arange(cut, 0.995, 0.01):
        sel = np.where(high, p >= c, p >= cut)
        paws, agents = sel & (src == "paws"), sel & three
        if (not paws.any() or y[paws].mean() >= PAWS_MARGIN) and (
            not agents.any() or y[agents].mean() >= target
        ):
            return float(round(c, 2))
    return 0.99


# The share of the updates (rules and model together) the cut of P(update) must find.
UPDATE_SHARE = 0.95


def choose_update_cut(p: np.ndarray, is_update: np.ndarray, share: float = UPDATE_SHARE) -> float:
    """The highest cut of P(update | not same) that finds `share` of the updates: an update left
    as a silent second row is worse than a spurious conflict (both rows stay live)."""
    cut = 0.5
    for c in np.arange(0.5, 0.04, -0.05):
        cut = float(round(c, 2))
        if not is_update.any() or (p[is_update] >= c).mean() >= share:
            break
    return cut


def fit_heads(
    kind: str,
    x: np.ndarray,
    label: np.ndarray,
    hard: np.ndarray,
    w: np.ndarray,
    three: np.ndarray,
    l2: float = 1.0,
) -> tuple[Fitted, Fitted | None]:
    """P(same) over the pairs no hard guard vetoes; P(update | not same) over the three-way
    pairs that are not the same fact (hard-vetoed ones included: a changed number is often an
    update)."""
    m = ~hard
    same = Fitted(kind, x[m], (label[m] == "same").astype(np.float64), w[m], l2)
    mu = three & (label != "same")
    yu = (label[mu] == "update").astype(np.float64)
    upd = None
    if mu.sum() >= 20 and 0 < yu.sum() < len(yu):
        upd = Fitted(kind, x[mu], yu, np.ones(int(mu.sum())), l2, hidden=8)
    return same, upd


# P(update) of a pair an update rule decides (above any cut; left out when choosing the cut).
RULED = 2.0


def cross_validate(
    name: str, items: list, judged: list[int], inputs: list, encoder: object,
    folds: np.ndarray, k: int, rule: bool = True,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Out-of-fold P(same) (0 where a hard guard vetoes) and P(update | not same) of classifier
    `name` for the judged pairs (`items[judged[n]]` <-> `inputs[n]`)."""
    from memsieve.gate.guards import default_guards
    from memsieve.gate.judge_classifier import alignments, features_from

    kind = "logistic" if name.startswith("logistic") else "mlp"
    rule = rule and not name.endswith("-norule")
    feats = features_from(inputs, alignments(inputs, encoder), default_guards())  # type: ignore[arg-type]
    x = np.stack([f.values for f in feats])
    hard = np.array([bool(f.hard_vetoes) for f in feats])
    label = np.array([items[i].label for i in judged])
    src = np.array([items[i].source for i in judged])
    w = np.array([items[i].weight for i in judged])
    three = np.isin(src, THREE_WAY_SOURCES)
    fold = folds[judged]
    p_same = np.zeros(len(judged))
    p_upd = np.zeros(len(judged))
    for held in range(k):
        tr = fold != held
        same, upd = fit_heads(kind, x[tr], label[tr], hard[tr], w[tr], three[tr])
        te = ~tr
        p_same[te] = np.where(hard[te], 0.0, same.p(x[te]))
        p_upd[te] = upd.p(x[te]) if upd is not None else 0.0
    if rule:  # the shape rules of ClassifierJudge, as it applies them
        from memsieve.gate import judge_repeats, judge_rules, value_change

        for n, ((inc, cand), f) in enumerate(zip(inputs, feats, strict=True)):
            if judge_rules.never_same(f):
                p_same[n] = 0.0
            ta, tb = cand.content, inc.content
            if judge_repeats.restates(ta, tb) is not None:
                p_same[n] = 1.0
            if value_change.one_value_changed(
                inc, cand, f.hard_vetoes + f.soft_vetoes, f.alignment
            ) or judge_rules.changes_a_value(f):
                p_upd[n] = RULED
    return p_same, p_upd


def cuts_for(
    p_same: np.ndarray,
    p_upd: np.ndarray,
    label: np.ndarray,
    src: np.ndarray,
    target: float,
    jac: np.ndarray,
) -> tuple[float, float, float]:
    """The cut of P(same) whose supersede precision over the three-way sources together reaches
    `target` (PAWS: 0.90), the high-overlap pairs' cut (`choose_overlap_cut`; `jac`: each
    pair's `jaccard` feature), and the cut of P(update) finding UPDATE_SHARE of the updates
    that are not the same fact, those an update rule decides (P = RULED) counted as found."""
    y = (label == "same").astype(np.float64)
    three = np.isin(src, THREE_WAY_SOURCES)
    pooled = np.where(three, "three", src)
    cut = choose_same_cut(p_same, y, pooled, target)
    overlap = choose_overlap_cut(p_same, y.astype(bool), src, jac, cut, target)
    not_same = three & (label != "same")
    return cut, overlap, choose_update_cut(p_upd[not_same], label[not_same] == "update")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "worker/gate/data/judge_classifier.json"))
    ap.add_argument("--paws-dev", default=str(ROOT.parent / "shared/data/paws/paws_wiki_dev.tsv"))
    ap.add_argument("--paws-every", type=int, default=1, help="use every Nth PAWS dev pair")
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("--cache-dir", default="/tmp")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--model", choices=("mlp", "logistic"), default="mlp")
    args = ap.parse_args()

    import judge_data
    from memsieve.gate import judge_features, thresholds
    from memsieve.gate.guards import default_guards
    from memsieve.gate.judge_classifier import alignments, features_from, pair_inputs

    items = judge_data.load_items(args.paws_every, Path(args.paws_dev), [])
    model, dist, words = judge_data.embed_and_encode(items, Path(args.cache_dir))
    folds = judge_data.fold_of(judge_data.groups(items), args.folds)
    print(f"{len(items)} training pairs", {s: sum(i.source == s for i in items) for s in
          dict.fromkeys(i.source for i in items)})  # fmt: skip
    judged = [
        i
        for i, it in enumerate(items)
        if it.a != it.b and dist[i] < thresholds.threshold_for(model, it.kind)
    ]
    inputs = pair_inputs([(items[i].a, items[i].b, float(dist[i])) for i in judged])
    encoder = judge_data.CachedEncoder(words)
    name = "logistic" if args.model == "logistic" else "classifier"
    p_same, p_upd = cross_validate(name, items, judged, inputs, encoder, folds, args.folds)
    label = np.array([items[i].label for i in judged])
    src = np.array([items[i].source for i in judged])
    feats = features_from(inputs, alignments(inputs, encoder), default_guards())
    x = np.stack([f.values for f in feats])
    jac = x[:, judge_features.FEATURE_NAMES.index("jaccard")]
    cut, overlap_cut, update_cut = cuts_for(p_same, p_upd, label, src, args.target, jac)
    print(
        f"cut p(same) {cut:.2f}, {overlap_cut:.2f} from Jaccard {OVERLAP_FROM} (out-of-fold), "
        f"cut p(update) {update_cut:.2f}"
    )

    hard = np.array([bool(f.hard_vetoes) for f in feats])
    w = np.array([items[i].weight for i in judged])
    three = np.isin(src, THREE_WAY_SOURCES)
    same, upd = fit_heads(args.model, x, label, hard, w, three, args.l2)
    out = {
        "about": "memsieve gate pair classifier over "
        "memsieve.gate.judge_features.FEATURE_NAMES; trained by scripts/train_judge.py on "
        f"tests/data/{', '.join(file for _, file in PAIR_SOURCES)} and PAWS-Wiki dev (Google LLC)",
        "features": list(judge_features.FEATURE_NAMES),
        "same": same.to_obj(),
        "same_cut": cut,
        "overlap_cut": {"from": OVERLAP_FROM, "cut": overlap_cut},
        "update": None if upd is None else upd.to_obj(),
        "update_cut": update_cut,
        "threshold_model": model,
        "training_pairs": int((~hard).sum()),
        "sources": dict(sorted(Counter(str(s) for s in src).items())),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

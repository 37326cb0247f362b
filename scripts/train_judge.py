"""Train the gate's pair classifier on the TRAINING data only, and write its weights.

    . .venv/bin/activate && python scripts/train_judge.py [--out worker/gate/data/judge_classifier.json]

Training data (never the frozen test splits, never PAWS test):
  - tests/data/eval_pairs.jsonl (the team's tuning set);
  - PAWS-Wiki dev (../shared/data/paws/paws_wiki_dev.tsv; Zhang, Baldridge and He, NAACL 2019,
    data by Google LLC);
  - /work/evalsets/train3.jsonl when present (three-way labels).

Only pairs the judge would see are used: cosine distance under the embedder's threshold and
no hard veto (numbers, identifiers, dates). Two logistic regressions (numpy, Newton steps with
an L2 penalty): P(same) over every such pair, and P(update | not same) over the pairs with a
three-way label. The decision cut of P(same) is the smallest that keeps supersede precision
>= --target on each training source in 5-fold cross-validation.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import pickle
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@dataclass
class Ex:
    a: str
    b: str
    label: str  # same | update | different
    source: str
    category: str
    three_way: bool


def load_jsonl(path: Path, source: str) -> list[Ex]:
    out = []
    for line in path.open(encoding="utf-8"):
        if not line.strip():
            continue
        o = json.loads(line)
        if o.get("correction"):
            continue  # a correction naming its target never reaches the judge
        if "label" in o:
            label, three = str(o["label"]).lower(), True
        else:
            cat = o.get("category", "")
            label = "same" if o["same"] else ("update" if cat == "update" else "different")
            three = cat == "update" or bool(o["same"])
        out.append(Ex(o["a"], o["b"], label, source, o.get("category", ""), three))
    return out


def load_paws(path: Path) -> list[Ex]:
    out = []
    with path.open(newline="", encoding="utf-8") as fh:
        for rec in csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if len(rec) == 4 and rec[3].strip() in ("0", "1"):
                same = rec[3].strip() == "1"
                out.append(Ex(rec[1], rec[2], "same" if same else "different", "paws", "", False))
    return out


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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "worker/gate/data/judge_classifier.json"))
    ap.add_argument("--paws-dev", default=str(ROOT.parent / "shared/data/paws/paws_wiki_dev.tsv"))
    ap.add_argument("--train3", default="/work/evalsets/train3.jsonl")
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("--paws-weight", type=float, default=0.15)
    ap.add_argument("--cache-dir", default="/tmp")
    ap.add_argument("--l2", type=float, default=1.0)
    args = ap.parse_args()

    from memsieve.embedders.local import LocalEmbedder
    from memsieve.gate import guards as gguards
    from memsieve.gate import judge_align, judge_features
    from memsieve.gate import text as gtext
    from memsieve.gate.judge_classifier import pair_inputs, raw_features
    from memsieve.gate.thresholds import threshold_for
    from memsieve.ops.calibrate import Pair, cosine_distances

    data = load_jsonl(ROOT / "tests/data/eval_pairs.jsonl", "eval")
    data += load_paws(Path(args.paws_dev))
    if Path(args.train3).exists():
        data += load_jsonl(Path(args.train3), "train3")
    counts = {s: sum(e.source == s for e in data) for s in ("eval", "paws", "train3")}
    print(f"{len(data)} training pairs", counts)
    embedder = LocalEmbedder()
    threshold = threshold_for(embedder.model, "pattern")
    # Distances and features are cached by the training data's content (they take minutes).
    digest = hashlib.sha256(
        json.dumps([(e.a, e.b) for e in data]).encode()
        + json.dumps(judge_features.FEATURE_NAMES).encode()
        + Path(judge_features.__file__).read_bytes()
        + Path(judge_align.__file__).read_bytes()
        + Path(gtext.__file__).read_bytes()
        + Path(gguards.__file__).read_bytes()
    ).hexdigest()[:16]
    cache = Path(args.cache_dir) / f"memsieve-judge-features-{digest}.pkl"
    if cache.exists():
        dist, near, feats = pickle.loads(cache.read_bytes())
    else:
        dist = cosine_distances([Pair(e.a, e.b, e.label == "same") for e in data], embedder)
        near = [i for i, d in enumerate(dist) if d < threshold]
        encoder = judge_align.MiniLMTokenEncoder(cache_size=100_000)
        triples = [(data[i].a, data[i].b, dist[i]) for i in near]
        feats = raw_features(pair_inputs(triples), encoder)
        cache.write_bytes(pickle.dumps((dist, near, feats)))
    keep = [i for i, f in zip(near, feats, strict=True) if not f.hard_vetoes]
    by_index = dict(zip(near, feats, strict=True))
    x = np.stack([by_index[i].values for i in keep])
    y = np.array([data[i].label == "same" for i in keep], dtype=np.float64)
    src = np.array([data[i].source for i in keep])
    w = np.where(src == "paws", args.paws_weight, 1.0)
    print(f"{len(keep)} pairs reach the judge; same {int(y.sum())}")

    # 5-fold cross-validated P(same), for the cut and an honest training-time estimate.
    rng = np.random.default_rng(15)
    fold = rng.integers(0, 5, len(keep))
    oof = np.zeros(len(keep))
    for k in range(5):
        tr = fold != k
        beta = fit_logistic(x[tr], y[tr], w[tr], args.l2)
        oof[~tr] = predict(x[~tr], beta)
    cut = None
    for c in np.arange(0.30, 0.99, 0.01):
        ok = True
        for s in set(src):
            m = (src == s) & (oof >= c)
            if m.sum() and y[m].mean() < (args.target if s != "paws" else 0.90):
                ok = False
        if ok:
            cut = float(round(c, 2))
            break
    cut = cut if cut is not None else 0.9
    for s in sorted(set(src)):
        m = src == s
        pred = oof[m] >= cut
        tp = float((pred & (y[m] == 1)).sum())
        print(
            f"cv {s:7s} cut {cut:.2f}: precision {tp / max(1, pred.sum()):.3f}"
            f" recall-within-judge {tp / max(1, y[m].sum()):.3f}  n={m.sum()}"
        )
    beta_same = fit_logistic(x, y, w, args.l2)

    # P(update | not same) on the three-way pairs that are not the same fact.
    # Hard-vetoed pairs included: a changed number is often an update.
    three = [i for i in near if data[i].three_way and data[i].label != "same"]
    beta_update = None
    if len(three) >= 20:
        xu = np.stack([by_index[i].values for i in three])
        yu = np.array([data[i].label == "update" for i in three], dtype=np.float64)
        if 0 < yu.sum() < len(yu):
            fu = rng.integers(0, 5, len(three))
            oofu = np.zeros(len(three))
            for k in range(5):
                tr = fu != k
                oofu[~tr] = predict(
                    xu[~tr], fit_logistic(xu[tr], yu[tr], np.ones(int(tr.sum())), args.l2)
                )
            acc_u = float(((oofu >= 0.5) == (yu == 1)).mean())
            rec_u = float((oofu[yu == 1] >= 0.5).mean())
            beta_update = fit_logistic(xu, yu, np.ones(len(three)), args.l2)
            print(
                f"update model on {len(three)} pairs ({int(yu.sum())} updates): "
                f"cv accuracy {acc_u:.3f}, update recall {rec_u:.3f}"
            )

    out = {
        "about": "memsieve gate pair classifier: logistic weights over "
        "memsieve.gate.judge_features.FEATURE_NAMES; trained by scripts/train_judge.py on "
        "tests/data/eval_pairs.jsonl, PAWS-Wiki dev (Google LLC) and /work/evalsets/train3.jsonl",
        "features": list(judge_features.FEATURE_NAMES),
        "same": [round(float(v), 6) for v in beta_same],
        "same_cut": cut,
        "update": None if beta_update is None else [round(float(v), 6) for v in beta_update],
        "threshold_model": embedder.model,
        "training_pairs": len(keep),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    for name, v in zip(judge_features.FEATURE_NAMES, beta_same, strict=True):
        print(f"  {name:24s} {v:+.3f}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

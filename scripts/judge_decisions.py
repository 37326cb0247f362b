"""Every pair's gate outcome as JSON lines, to compare two revisions of the judge line by line.

    . .venv/bin/activate && python scripts/judge_decisions.py PAIRS_FILE OUT.jsonl [--judge classifier]

Each line: [a, b, action, verdict, judge, detail] for one labelled pair (the local embedder's
distances, the judge's verdict and detail as `memsieve calibrate --judge` computes them).
Run it on two checkouts and `diff` the files: a change that should not move any decision
(a new token-vector source, a faster grouping) shows as no difference at all.
"""

from __future__ import annotations

import argparse
import json

from memsieve.embedders.local import LocalEmbedder
from memsieve.ops import gate_quality


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("pairs")
    ap.add_argument("out")
    ap.add_argument("--judge", default="classifier", choices=gate_quality.JUDGES)
    opts = ap.parse_args()
    pairs = gate_quality.load(opts.pairs)
    q = gate_quality.run(pairs, LocalEmbedder(), gate_quality.make_judge(opts.judge))
    with open(opts.out, "w", encoding="utf-8") as f:
        for o in q.outcomes:
            row = [o.pair.a, o.pair.b, o.action, o.verdict, o.judge, o.detail]
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(
        f"{opts.pairs}: precision {q.precision:.3f}, recall {q.recall:.3f}, {len(q.outcomes)} pairs"
    )


if __name__ == "__main__":
    main()

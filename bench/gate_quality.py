"""The gate's judgement on labelled pairs: precision / recall of supersede, per-category errors.

    . .venv/bin/activate && python -m bench.gate_quality PAIRS_FILE
        [--judge default|guards|classifier] [--embedder local|hashing] [--errors N] [--json]

PAIRS_FILE: JSON lines {a, b, label: same|update|different | same: bool, category?, b_kind?}
or PAWS TSV. What is measured and how: memsieve.ops.gate_quality. Held-out files
(tests/data/gate_pairs_frozen_test.jsonl, PAWS test, /work/evalsets/frozen2.jsonl) are measured
once with the final configuration and never tuned on; tuning is scripts/train_judge.py's, on
training data only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from memsieve.embedders.base import Embedder
from memsieve.ops import gate_quality


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pairs_file")
    ap.add_argument("--embedder", choices=("local", "hashing"), default="local")
    ap.add_argument("--judge", choices=gate_quality.JUDGES, default="default")
    ap.add_argument("--errors", type=int, default=10, help="print the first N errors")
    ap.add_argument("--json", action="store_true")
    opts = ap.parse_args(argv)
    embedder: Embedder
    if opts.embedder == "hashing":
        from memsieve.embedders.hashing import HashingEmbedder

        embedder = HashingEmbedder()
    else:
        from memsieve.embedders.local import LocalEmbedder

        embedder = LocalEmbedder()
    pairs = gate_quality.load(opts.pairs_file)
    judge = gate_quality.make_judge(opts.judge, embedder.model)
    q = gate_quality.run(pairs, embedder, judge)
    q.source = Path(opts.pairs_file).name
    if opts.json:
        print(json.dumps(gate_quality.to_json(q)))
    else:
        print(gate_quality.format_quality(q, opts.errors))
    return 0


if __name__ == "__main__":
    sys.exit(main())

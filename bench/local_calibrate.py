"""The dedupe tables with the ONNX Runtime MiniLM beside the sentence-transformers one.

Same code, same pairs, same guards; only the embedder differs. Needs the `torch` extra
(dev installs) for the reference.

    . .venv/bin/activate && python -m bench.local_calibrate PAIRS_FILE [--limit N]

PAIRS_FILE as for `memsieve calibrate` (PAWS TSV or our JSON lines). PAWS: Zhang, Baldridge
and He, NAACL 2019; data by Google LLC.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import numpy as np
from memsieve.embedders import local
from memsieve.gate import guards, thresholds
from memsieve.ops import calibrate


class SentenceTransformersMiniLM:
    """The reference: the same weights through sentence-transformers and torch."""

    model = local.MODEL_NAME
    dims = 384
    default_threshold = local.LocalEmbedder.default_threshold
    max_batch = 256

    def __init__(self) -> None:
        from sentence_transformers import SentenceTransformer

        self._st = SentenceTransformer(str(local.model_dir()), device="cpu")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vecs = self._st.encode(
            list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True
        )
        return [v.tolist() for v in np.asarray(vecs)]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("pairs_file")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--kind", default="pattern")
    ap.add_argument("--target-precision", type=float, default=0.9)
    args = ap.parse_args()
    pairs = calibrate.load_pairs(args.pairs_file, limit=args.limit)
    onnx = local.LocalEmbedder()
    current = thresholds.threshold_for(onnx.model, args.kind)
    grid = sorted({*calibrate.DEFAULT_THRESHOLDS, current})
    for name, emb in (
        ("ONNX Runtime (default install)", onnx),
        ("sentence-transformers + torch (reference)", SentenceTransformersMiniLM()),
    ):
        started = time.perf_counter()
        report = calibrate.run_calibration(
            pairs, emb, grid, guards.default_guards(), args.kind, args.target_precision
        )
        print(f"== {name}: {len(pairs)} pairs, {time.perf_counter() - started:.0f} s")
        print(calibrate.format_report(report))
        print(f"current default for {emb.model} / {args.kind}: {current:.3f}\n", flush=True)


if __name__ == "__main__":
    main()

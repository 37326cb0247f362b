"""`memsieve calibrate PAIRS_FILE`: precision and recall of the real gate on labelled pairs."""

from __future__ import annotations

import argparse
import json
import sys

from memsieve import errors
from memsieve.embedders.base import Embedder
from memsieve.gate import guards, thresholds
from memsieve.ops import calibrate


def _thresholds(raw: str) -> list[float]:
    try:
        values = sorted({float(x) for x in raw.split(",") if x.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a comma-separated list of numbers: {raw!r}"
        ) from None
    if not values or any(not 0.0 < v <= 2.0 for v in values):
        raise argparse.ArgumentTypeError("thresholds must lie in (0, 2]")
    return values


def _embedder(name: str) -> Embedder:
    if name == "hashing":
        from memsieve.embedders.hashing import HashingEmbedder

        return HashingEmbedder()
    from memsieve.embedders.local import LocalEmbedder

    return LocalEmbedder()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for --help tests)."""
    p = argparse.ArgumentParser(
        prog="memsieve calibrate",
        description="Run the dedupe gate (embedder + threshold + guards) on labelled pairs and "
        "print precision and recall of its supersede decisions per threshold.",
    )
    p.add_argument(
        "pairs_file",
        metavar="PAIRS_FILE",
        help="PAWS TSV (id, s1, s2, label) or JSON lines {a, b, same | label, category?, b_kind?}",
    )
    p.add_argument("--embedder", choices=("local", "hashing"), default="local")
    p.add_argument("--kind", choices=thresholds.KINDS, default="pattern")
    p.add_argument(
        "--thresholds",
        type=_thresholds,
        default=None,
        help="comma-separated cosine distances (default 0.02..0.50 step 0.02, plus the current default)",
    )
    p.add_argument("--target-precision", type=float, default=0.9)
    p.add_argument("--limit", type=int, default=None, help="use only the first N pairs")
    p.add_argument("--no-guards", action="store_true", help="cosine distance alone, for comparison")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--judge",
        choices=("default", "guards", "classifier", "none"),
        default="default",
        help="after the threshold table, run the gate's judgment stage at the current default "
        "threshold and print supersede precision / recall, update handling and errors by "
        "category (none: skip)",
    )
    p.add_argument("--errors", type=int, default=10, help="list the first N judged errors")
    return p


def cli_calibrate(args: list[str]) -> int:
    """Entry point for `memsieve calibrate`; returns the process exit code."""
    opts = build_parser().parse_args(args)
    try:
        pairs = calibrate.load_pairs(opts.pairs_file, limit=opts.limit)
    except (OSError, ValueError) as exc:
        print(f"memsieve calibrate: {exc}", file=sys.stderr)
        return 2
    if not pairs:
        print(f"memsieve calibrate: no pairs in {opts.pairs_file}", file=sys.stderr)
        return 2
    try:
        embedder = _embedder(opts.embedder)
        from memsieve.settings import Settings

        # The threshold in force today: the table, or the operator's override.
        current = thresholds.threshold_for(embedder.model, opts.kind, Settings.from_env())
    except errors.ConfigError as exc:
        print(f"memsieve calibrate: {exc}", file=sys.stderr)
        return 2
    grid = opts.thresholds or sorted({*calibrate.DEFAULT_THRESHOLDS, current})
    report = calibrate.run_calibration(
        pairs,
        embedder,
        grid,
        () if opts.no_guards else guards.default_guards(),
        opts.kind,
        opts.target_precision,
    )
    quality = None
    if opts.judge != "none":
        from memsieve.ops import gate_quality

        labelled = gate_quality.load(opts.pairs_file, limit=opts.limit)
        judge = gate_quality.make_judge(opts.judge, embedder.model)
        quality = gate_quality.run(labelled, embedder, judge)
        quality.source = opts.pairs_file
    if opts.json:
        if quality is None:
            print(calibrate.report_to_json(report))
        else:
            from memsieve.ops import gate_quality

            obj = json.loads(calibrate.report_to_json(report))
            obj["judgment"] = gate_quality.to_json(quality)
            print(json.dumps(obj, indent=2))
    else:
        print(calibrate.format_report(report))
        print(f"\ncurrent default for {embedder.model} / {opts.kind}: {current:.3f}")
        if quality is not None:
            from memsieve.ops import gate_quality

            print("\njudgment stage at the default threshold:")
            print(gate_quality.format_quality(quality, opts.errors))
    return 0

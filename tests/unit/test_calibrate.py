"""calibrate: loading pairs, counting decisions, recommending a threshold (hashing embedder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memsieve import errors
from memsieve.cli.calibrate import cli_calibrate
from memsieve.embedders.hashing import HashingEmbedder
from memsieve.gate import guards, thresholds
from memsieve.ops import calibrate
from memsieve.settings import Settings

EVAL = Path(__file__).resolve().parents[1] / "data" / "eval_pairs.jsonl"


def test_load_paws_tsv(tmp_path: Path) -> None:
    f = tmp_path / "p.tsv"
    f.write_bytes(b'1\tA "quoted" one .\tA one .\t1\r\n2\tx y\ty x\t0\r\n')
    pairs = calibrate.load_pairs(f)
    assert pairs == [
        calibrate.Pair('A "quoted" one .', "A one .", True, "paraphrase"),
        calibrate.Pair("x y", "y x", False, "swap"),
    ]
    assert len(calibrate.load_pairs(f, limit=1)) == 1


def test_load_jsonl_and_reject_bad_line(tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    f.write_text('{"a": "x", "b": "y", "same": true, "category": "reworded"}\n\n{"a": "x"}\n')
    with pytest.raises(ValueError, match=r"p.jsonl:3: not a pair"):
        calibrate.load_pairs(f)


def test_eval_set_shape() -> None:
    pairs = calibrate.load_pairs(EVAL)
    assert len(pairs) >= 300
    cats = {p.category for p in pairs}
    assert {
        "reworded",
        "update",
        "distinct_same_component",
        "trap_number",
        "trap_id",
        "trap_path",
        "trap_date",
        "trap_swap",
    } <= cats
    assert all(p.same for p in pairs if p.category in ("reworded", "update_targeted"))
    assert not any(p.same for p in pairs if p.category.startswith("trap_"))


def test_evaluate_counts_and_recommends() -> None:
    pairs = [
        calibrate.Pair("uses port 5432", "uses port 5433", False),
        calibrate.Pair("a lesson about naming", "a lesson on naming", True),
        calibrate.Pair("same text", "same text", True),
    ]
    rows, best, cats, vetoes = calibrate.evaluate(
        pairs, [0.01, 0.2, 0.0], [0.1, 0.3], guards.default_guards()
    )
    assert (rows[0].tp, rows[0].fp, rows[0].fn, rows[0].tn) == (1, 0, 1, 1)
    assert (rows[1].tp, rows[1].fp) == (2, 0)
    assert rows[1].cosine_fp == 1 and rows[1].precision == 1.0
    assert best == 0.3
    assert vetoes == {"numbers": 1}


def test_recommend_prefers_the_stricter_of_near_ties() -> None:
    rows = [calibrate.Row(0.3, 90, 5, 10, 0), calibrate.Row(0.4, 91, 9, 9, 0)]
    assert calibrate.recommend(rows, 0.9) == 0.3
    assert calibrate.recommend(rows, 0.99) is None


def test_run_calibration_report_and_json() -> None:
    pairs = calibrate.load_pairs(EVAL, limit=60)
    report = calibrate.run_calibration(
        pairs, HashingEmbedder(), [0.2, 0.35], guards.default_guards()
    )
    assert report.pairs == 60 and report.model == "hashing-v1-384"
    text = calibrate.format_report(report)
    assert "threshold  precision" in text and "by category" in text
    data = json.loads(calibrate.report_to_json(report))
    assert {"precision", "recall", "f1"} <= data["rows"][0].keys()


def test_cli_prints_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_calibrate([str(EVAL), "--embedder", "hashing", "--thresholds", "0.3,0.5"]) == 0
    assert "recommended" in capsys.readouterr().out
    assert cli_calibrate([str(EVAL), "--embedder", "hashing", "--limit", "5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"] == 5


def test_cli_prints_the_judgment_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pairs = tmp_path / "three_way.jsonl"
    rows = [
        {"a": "Deploys run on Fridays.", "b": "Deploys run on Fridays!", "label": "same"},
        {"a": "Postgres listens on port 5432.", "b": "Postgres listens on port 5433.",
         "label": "different", "category": "trap_number"},
        {"a": "The limit is 10 MB.", "b": "The limit is now 20 MB.", "label": "update",
         "category": "update", "b_kind": "correction"},
    ]  # fmt: skip
    pairs.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert cli_calibrate([str(pairs), "--embedder", "hashing", "--thresholds", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "judgment stage at the default threshold:" in out
    assert "judge guards" in out  # the hashing test embedder's default judge
    assert "number traps: 1 pairs, false supersedes 0" in out
    assert "update pairs 1:" in out
    assert cli_calibrate([str(pairs), "--embedder", "hashing", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["judgment"]["pairs"] == 3 and data["judgment"]["judge"] == "guards"
    assert cli_calibrate([str(pairs), "--embedder", "hashing", "--judge", "none"]) == 0
    assert "judgment stage" not in capsys.readouterr().out


def test_cli_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli_calibrate([str(tmp_path / "nope.jsonl"), "--embedder", "hashing"]) == 2
    assert "memsieve calibrate:" in capsys.readouterr().err


def test_threshold_table_and_overrides() -> None:
    assert thresholds.threshold_for("all-MiniLM-L6-v2", "pattern") == 0.40
    assert thresholds.threshold_for("text-embedding-3-small", "retro") == 0.08
    assert thresholds.threshold_for("hashing-v1-64", "failure") == 0.35
    assert thresholds.threshold_for("unknown-model", "retro") == thresholds.FALLBACK
    unset = Settings.from_env({})
    assert thresholds.threshold_for("all-MiniLM-L6-v2", "pattern", unset) == 0.40
    env = {"MEMSIEVE_THRESHOLD": "0.2", "MEMSIEVE_THRESHOLD_FAILURE": "0.3"}
    settings = Settings.from_env(env)
    assert thresholds.threshold_for("all-MiniLM-L6-v2", "failure", settings) == 0.3
    assert thresholds.threshold_for("all-MiniLM-L6-v2", "retro", settings) == 0.2
    with pytest.raises(errors.ConfigError, match="MEMSIEVE_THRESHOLD must be a number"):
        Settings.from_env({"MEMSIEVE_THRESHOLD": "x"})

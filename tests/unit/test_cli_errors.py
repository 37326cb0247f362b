"""Bad arguments and a closed pipe end a command with one line on stderr, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from memsieve.cli import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["recall", "ns", "query", "-k", "-1"], "argument -k: must be at least 1, got -1"),
        (["recall", "ns", "query", "-k", "0"], "argument -k: must be at least 1, got 0"),
        (["recall", "ns", "query", "-k", "many"], "argument -k: not a whole number: 'many'"),
        (["events", "--limit", "-1"], "argument --limit: must be at least 1, got -1"),
        (["enqueue", "--file", "-", "--chunk", "0"], "argument --chunk: must be at least 1, got 0"),
        (
            ["enqueue", "--file", "-", "--chunk", "-5"],
            "argument --chunk: must be at least 1, got -5",
        ),
        (
            ["resolve", "1", "--winner", "newer", "--reason", "x" * 2001],
            "argument --reason: at most 2000 characters, got 2001",
        ),
    ],
)
def test_a_count_below_one_is_refused_by_the_parser(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_a_missing_file_is_one_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMSIEVE_HOME", str(tmp_path / "home"))
    missing = tmp_path / "nowhere.jsonl"
    assert main.main(["enqueue", "--file", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err == f"memsieve: cannot read {missing}: No such file or directory\n"


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path) -> None:
    """`memsieve schema | head -0`: the pipe is closed before anything is written."""
    env = {**os.environ, "MEMSIEVE_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memsieve.cli.main", "schema"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_an_empty_event_id_is_refused_not_replaced_by_a_derived_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMSIEVE_HOME", str(tmp_path / "home"))
    argv = ["enqueue", "--namespace", "a", "--kind", "retro", "--heading", "h"]
    assert main.main([*argv, "--content", "Pin the base image.", "--event-id", ""]) == 2
    assert "event_id must be 1-128 chars" in capsys.readouterr().err

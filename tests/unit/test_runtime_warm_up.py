"""A worker process loads the judge's model at start (memsieve.flow.runtime.warm_up)."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from memsieve.flow import runtime


def test_the_classifier_behind_the_openai_embedder_loads_minilm_at_start(tmp_path: Path) -> None:
    """Behind the OpenAI embedder only the judge needs MiniLM: its session (seconds to load)
    is built by the warm-up, not by the first close pair of the first flush."""
    cache = tmp_path / "cache"
    code = (
        "from pathlib import Path\n"
        "from types import SimpleNamespace\n"
        "from memsieve.embedders import local\n"
        "from memsieve.flow.runtime import warm_up\n"
        "from memsieve.gate.judge_classifier import classifier_judge\n"
        f"judge = classifier_judge('text-embedding-3-small', model_cache=Path({str(cache)!r}))\n"
        "assert local._runtime is None\n"
        "warm_up(SimpleNamespace(embedder=object(), judge=judge))\n"
        "assert local._runtime is not None\n"
        "assert local._kept.items == {}  # the warm-up pass keeps nothing\n"
        "assert not judge.encoder._cache\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=180)


def test_a_failed_warm_up_is_logged_and_the_other_part_still_warms(
    caplog: pytest.LogCaptureFixture,
) -> None:
    warmed: list[str] = []

    def broken() -> None:
        raise RuntimeError("no model here")

    pipe = SimpleNamespace(
        embedder=SimpleNamespace(warm_up=broken),
        judge=SimpleNamespace(warm_up=lambda: warmed.append("judge")),
    )
    with caplog.at_level(logging.WARNING, logger="memsieve.tasks"):
        runtime.warm_up(pipe)  # type: ignore[arg-type]
    assert warmed == ["judge"]
    assert "embedder warm-up failed: no model here" in caplog.text

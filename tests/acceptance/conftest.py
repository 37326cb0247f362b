"""Acceptance tier: real worker processes (tests/support/workers.py) and a Celery producer
against the shared services of tests/conftest.py."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from memsieve.settings import Settings

from tests.support.workers import Workers


@pytest.fixture
def workers(env: dict[str, str], tmp_path: Path) -> Iterator[Workers]:
    w = Workers(env, tmp_path)
    yield w
    w.stop_all()


@pytest.fixture
def celery_app(settings: Settings) -> Any:
    from memsieve.app import configure

    return configure(replace(settings))

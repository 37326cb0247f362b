"""The `fake_openai` fixture: import it into a conftest.py (or a test module) to use it.

from tests.fakes.conftest_openai import fake_openai  # noqa: F401
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.openai_server import FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running FakeOpenAI (api key "sk-test", 1536-d by default), stopped after the test."""
    with FakeOpenAI() as server:
        yield server

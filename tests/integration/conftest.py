"""Integration tier: in-process fakes of outside services (the OpenAI API) on top of the
shared PostgreSQL and Redis of tests/conftest.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openai_server import FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running FakeOpenAI (api key "sk-test", 1536-d by default), stopped after the test."""
    with FakeOpenAI() as server:
        yield server

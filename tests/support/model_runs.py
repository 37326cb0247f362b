"""Record every forward pass of the local MiniLM runtime (texts, and whether token vectors
were asked for), while still running it: for tests that assert which texts reach the model."""

from __future__ import annotations

from typing import Any

import pytest


def record(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], bool]]:
    """Spy on `local._Runtime.encode` for the rest of the test; returns the list it fills."""
    from memsieve.embedders import local

    runs: list[tuple[list[str], bool]] = []
    real = local._Runtime.encode

    def spy(self: Any, texts: Any, tokens: bool = False) -> Any:
        runs.append(([str(t) for t in texts], tokens))
        return real(self, texts, tokens)

    monkeypatch.setattr(local._Runtime, "encode", spy)
    return runs

"""The one small interface every embedder implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors, in one call per batch.

    `model` is the name recorded on every row (e.g. "text-embedding-3-small");
    `dims` the vector length. Two embedders with the same `model` and `dims`
    produce comparable vectors; anything else must never be compared.
    """

    model: str
    dims: int
    default_threshold: float
    # Most inputs one embed() call accepts; callers batch up to this.
    max_batch: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, same order. Raises worker.errors.TransientError /
        PermanentError (PermanentError.index names the bad input when known)."""
        ...

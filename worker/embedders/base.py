"""The one small interface every embedder implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeAlias, runtime_checkable

import numpy as np
import numpy.typing as npt

# A list of floats, or a float32 numpy row (the OpenAI embedder decodes answers straight
# into one matrix; its rows are handed on without a Python float per number).
Vector: TypeAlias = list[float] | npt.NDArray[np.float32]


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

    def embed(self, texts: Sequence[str]) -> Sequence[Vector]:
        """One vector per text, same order. Raises worker.errors.TransientError /
        PermanentError (PermanentError.index names the bad input when known)."""
        ...

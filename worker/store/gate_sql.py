"""The gate's SQL search backend (MEMSIEVE_GATE_SEARCH=sql): the candidates come from one exact
nearest-neighbour query per event instead of the worker's in-memory copy of the namespace.

It only loads: the rows it finds (each event's k nearest live rows of the namespace and
model, and any live row byte-identical to an event) become the `LiveSet` that the one batch
gate (`memsieve.gate.batch.gate`) decides against, and `memsieve.store.gate_write.apply`
writes the decisions, as for the default path. The k nearest of the whole namespace are
among the rows loaded, so both backends decide alike. Used for every namespace with
MEMSIEVE_GATE_SEARCH=sql, and automatically for a namespace whose live set would not fit
MEMSIEVE_GATE_CACHE_MB (`memsieve.store.gate_write`; sizes and costs in docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from memsieve.gate import vectors
from memsieve.store.queries import QUERIES


def load_nearest(
    cur: psycopg.Cursor[Any],
    namespace: str,
    model: str,
    dims: int,
    todo: Sequence[tuple[Any, Any]],
    k: int,
) -> vectors.LiveSet:
    """The live rows a batch's gate can meet, found by SQL (exact, ordered by `<=>`)."""
    found: dict[str, tuple[vectors.Row, np.ndarray]] = {}

    def take(rows: list[tuple[Any, ...]]) -> None:
        for mid, kind, heading, content, chash, emb in rows:
            if mid not in found:
                vec = emb.to_numpy() if hasattr(emb, "to_numpy") else np.asarray(emb)
                found[mid] = (vectors.Row(mid, kind, heading, content, chash), vec)

    if todo:
        cur.execute(
            QUERIES["live_twins"],
            (namespace, model, [ev.content_hash for ev, _ in todo]),
            binary=True,
        )
        take(cur.fetchall())
    for _, vec in todo:
        v = np.asarray(vec, dtype=np.float32)
        cur.execute(
            QUERIES["nearest_live"],
            (namespace, model, v, k),
            binary=True,
        )
        take(cur.fetchall())
    rows = [r for r, _ in found.values()]
    matrix = np.vstack([v for _, v in found.values()]) if found else np.zeros((0, dims), np.float32)
    return vectors.LiveSet.build(dims, rows, matrix)

"""Recall's conflict marks: the open conflicts of recalled memories, the newer member first.

A recalled memory that an open conflict's newer member updates brings that member in, just
before it, even when it was not among the nearest: recall never answers with a value that
was updated without saying so. Each row gets `conflicts`: a list of
{conflict_id, with, this_is ("older" | "newer"), detail}; empty when it is in none.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from memsieve.store import queries


def mark_conflicts(
    cur: psycopg.Cursor[Any],
    rows: list[dict[str, Any]],
    vec: np.ndarray,
    model: str,
    as_of: datetime | None = None,
) -> list[dict[str, Any]]:
    """`as_of`: mark the conflicts open at that time (as-of recall), else those open now."""
    for r in rows:
        r["conflicts"] = []
    ids = [r["memory_id"] for r in rows]
    if not ids:
        return rows
    if as_of is None:
        found = queries.all(cur, "recall_open_conflicts", {"ids": ids})
    else:
        found = queries.all(cur, "recall_conflicts_as_of", {"ids": ids, "t": as_of})
    if not found:
        return rows
    by_id = {r["memory_id"]: r for r in rows}
    missing = sorted({c["newer_id"] for c in found} - by_id.keys())
    if missing:
        params = {"v": vec, "ids": missing, "model": model, "t": as_of}
        by_ids = "recall_by_ids" if as_of is None else "recall_by_ids_as_of"
        for r in queries.all(cur, by_ids, params):
            r["conflicts"] = []
            by_id[r["memory_id"]] = r
    newer_of: dict[str, list[str]] = {}
    for c in found:
        for me, other, role in (
            (c["older_id"], c["newer_id"], "older"),
            (c["newer_id"], c["older_id"], "newer"),
        ):
            if me in by_id:
                by_id[me]["conflicts"].append(
                    {"conflict_id": c["id"], "with": other, "this_is": role, "detail": c["detail"]}
                )
        if c["newer_id"] in by_id:
            newer_of.setdefault(c["older_id"], []).append(c["newer_id"])
    out: list[dict[str, Any]] = []
    emitted: set[str] = set()
    for r in rows:
        mid = r["memory_id"]
        if mid in emitted:
            continue
        newer = sorted(newer_of.get(mid, []), key=lambda m: by_id[m]["created_at"], reverse=True)
        for n in newer:
            if n not in emitted:
                emitted.add(n)
                out.append(by_id[n])
        emitted.add(mid)
        out.append(r)
    return out

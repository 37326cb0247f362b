"""The gate's live set of a namespace: from the process cache, brought up to date, or loaded.

`live_for` runs inside the write transaction, after `pg_advisory_xact_lock(namespace)`:
no writer of this namespace can change it meanwhile. A cached copy at version v0 with the
namespace at v1 reads only the rows whose `row_version` (migration 110) is in (v0, v1]: one
per change when nothing else happened, so a check that their number equals v1 - v0 proves
the copy complete; anything else (a hard delete, a row changed twice) is a full load.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg
from memsieve.gate import vectors
from memsieve.store.queries import QUERIES


def _vec(emb: Any) -> np.ndarray:
    return np.asarray(emb.to_numpy() if hasattr(emb, "to_numpy") else emb, dtype=np.float32)


def load_all(cur: psycopg.Cursor[Any], namespace: str, model: str, dims: int) -> vectors.LiveSet:
    cur.execute(QUERIES["live_rows"], (namespace, model), binary=True)
    rows, vecs = [], []
    for mid, kind, heading, content, chash, emb in cur.fetchall():
        rows.append(vectors.Row(mid, kind, heading, content, chash))
        vecs.append(_vec(emb))
    matrix = np.vstack(vecs) if vecs else np.zeros((0, dims), np.float32)
    return vectors.LiveSet.build(dims, rows, matrix)


def refresh(
    cur: psycopg.Cursor[Any],
    live: vectors.LiveSet,
    namespace: str,
    model: str,
    since: int,
    now: int,
) -> bool:
    """Apply the rows changed in (since, now] to `live`; False (live untouched) when they do
    not account for every version bump in between: the caller loads the namespace whole."""
    cur.execute(QUERIES["changed_rows"], (namespace, since, now), binary=True)
    changed = cur.fetchall()
    if len(changed) != now - since:
        return False
    for mid, kind, heading, content, chash, emb, alive, row_model in changed:
        row = vectors.Row(mid, kind, heading, content, chash)
        same_space = row_model == model
        live.upsert(
            row,
            vectors.unit(_vec(emb)) if same_space else np.zeros(live.dims),
            alive and same_space,
        )
    return True


def fits(
    cur: psycopg.Cursor[Any],
    cache: vectors.NamespaceCache,
    namespace: str,
    model: str,
    dims: int,
) -> bool:
    """Whether the namespace's live set fits the cache. Counted only when the cache holds no
    copy of it (a copy was within the budget when it was filed; one that outgrows it is
    not filed again, so its next batch counts)."""
    if cache.peek(namespace, model) is not None:
        return True
    cur.execute(QUERIES["count_live"], (namespace, model))
    row = cur.fetchone()
    return cache.fits(int(row[0]) if row else 0, dims)


def live_for(
    cur: psycopg.Cursor[Any],
    cache: vectors.NamespaceCache,
    namespace: str,
    model: str,
    dims: int,
    version: int,
) -> tuple[vectors.LiveSet, bool]:
    """The namespace's live set at `version`, and whether the cache now holds it."""
    live = cache.get(namespace, model, version)
    if live is not None:
        return live, True
    stale = cache.peek(namespace, model)
    if stale is not None and stale[0] < version:
        # Only rows committed by others are applied, and the copy is re-filed at their
        # version at once: it is right whether or not this transaction commits.
        if refresh(cur, stale[1], namespace, model, stale[0], version):
            cache.refreshes += 1
            cache.put(namespace, model, version, stale[1])
            return stale[1], True
        cache.drop(namespace, model)
    cache.loads += 1
    return load_all(cur, namespace, model, dims), False

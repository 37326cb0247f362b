"""Writing through the real gate at chosen times, for history tests.

`write_at` takes the same path as a worker's flush (Pipeline.accept: validation + capture
policy into the inbox; the pipeline's embedder; Store.write_batch: advisory lock, gate,
insert/supersede/merge), except that the batch is written with `now=when`, so created_at and
deleted_at are the scripted times instead of the wall clock.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memsieve.flow.pipeline import Pipeline
from memsieve.schemas import memory


def write_at(pipe: Pipeline, when: datetime, **event: Any) -> dict[str, Any]:
    """Accept one capture event and write it at `when`; returns its ledger row."""
    pipe.ensure_bound()
    raw = {"kind": "correction", **event}
    accepted = pipe.accept([raw])[0]
    assert accepted.status == "pending", accepted
    ns = accepted.namespace
    assert ns is not None
    pending = [p for p in pipe.store.claim_pending(ns, 100) if p.event_id == accepted.event_id]
    vectors = pipe.embedder.embed([memory.memory_text(p.heading, p.content) for p in pending])
    pipe.store.write_batch(
        ns,
        list(zip(pending, vectors, strict=True)),
        pipe.embedder.model,
        pipe.embedder.dims,
        pipe.threshold_for,
        pipe.guards,
        now=when,
    )
    row = pipe.store.get_event(accepted.event_id)
    assert row is not None and row["status"] == "written", row
    return row

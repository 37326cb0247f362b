"""Undoing a mistaken supersede: both facts come back, the record shows every step, and a
revert that would break invariant 1 or 2 is refused without changing anything."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from memsieve.history.api import History
from memsieve.history.revert import RevertRefused, revert

from tests.support import db
from tests.support.history import write_at

NS = "infra"
STAGING = "The staging database listens on port 5433, behind the VPN."
PROD = "The production database listens on port 5432, behind the bastion."


def t(day: int, hour: int = 9) -> datetime:
    return datetime(2026, 2, day, hour, tzinfo=UTC)


@pytest.fixture
def mistake(pipeline: Any) -> dict[str, str]:
    """A correction that named the wrong memory: it hides a distinct fact."""
    staging = write_at(
        pipeline,
        t(1),
        namespace=NS,
        event_id="e-staging",
        kind="retro",
        heading="Database port",
        content=STAGING,
    )
    prod = write_at(
        pipeline,
        t(3),
        namespace=NS,
        event_id="e-prod",
        heading="Database port",
        content=PROD,
        supersedes=str(staging["memory_id"]),
        source={"agent": "ops-bot"},
    )
    assert prod["decision"] == "superseded"
    return {"staging": str(staging["memory_id"]), "prod": str(prod["memory_id"])}


def _recalled(pipeline: Any, query: str = "database port") -> set[str]:
    vec = pipeline.embedder.embed([query])[0]
    return {r["content"] for r in pipeline.store.recall(NS, vec, pipeline.embedder.model, 10)}


def _live_ids(h: History, when: datetime) -> set[str]:
    return {r["memory_id"] for r in h.live_as_of(NS, when)}


def test_revert_brings_the_hidden_fact_back_and_records_both_steps(
    pipeline: Any, mistake: dict[str, str]
) -> None:
    s, p = mistake["staging"], mistake["prod"]
    assert _recalled(pipeline) == {PROD}

    done = revert(pipeline.store, p, actor="alice", reason="different databases", at=t(5))
    assert done.kind == "revert" and done.older_id == s and done.newer_id == p
    assert _recalled(pipeline) == {PROD, STAGING}
    # The same row is live again, not a copy.
    assert pipeline.store.get_memory(s)["deleted_at"] is None
    assert pipeline.store.get_memory(p)["deleted_at"] is None

    h = History(pipeline.store)
    lin = h.history(s)
    assert [(st.kind, st.at, st.actor) for st in lin.steps] == [
        ("supersede", t(3), "ops-bot"),
        ("revert", t(5), "alice"),
    ]
    assert lin.steps[1].undoes == lin.steps[0].revision
    assert lin.steps[1].reason == "different databases"
    assert {v.memory_id for v in lin.live} == {s, p}
    assert lin.version(s).intervals == [(t(1), t(3)), (t(5), None)]
    assert lin.version(p).supersedes == s and lin.version(p).supersede_active is False

    # As-of stays exact: staging was not live between the supersede and the revert.
    assert _live_ids(h, t(2)) == {s}
    assert _live_ids(h, t(4)) == {p}
    assert _live_ids(h, t(6)) == {s, p}

    text = h.explain(s).text
    assert "superseded it (event e-prod)" in text
    assert "that supersede was reverted by alice (rev-" in text
    assert "reason: 'different databases'): memory " in text
    assert f"It is live; so is memory {p[:8]}." in text
    ev = h.explain("e-prod")
    assert ev.outcome == "superseded" and "was reverted by alice" in ev.text
    assert "Recorded as rev-" in done.text and f"memsieve revert rev-{done.revision}" in done.text


def test_a_revert_can_be_undone_and_redone(pipeline: Any, mistake: dict[str, str]) -> None:
    s, p = mistake["staging"], mistake["prod"]
    first = revert(pipeline.store, p, actor="alice", at=t(5))
    undo = revert(pipeline.store, f"rev-{first.revision}", actor="bob", at=t(7))
    assert undo.kind == "unrevert" and undo.undoes == first.revision
    assert _recalled(pipeline) == {PROD}
    assert pipeline.store.get_memory(p)["supersedes"] == s  # the link is in force again
    redo = revert(pipeline.store, f"rev-{undo.revision}", actor="carol", at=t(9))
    assert redo.kind == "revert"
    assert _recalled(pipeline) == {PROD, STAGING}

    h = History(pipeline.store)
    assert h.history(s).version(s).intervals == [(t(1), t(3)), (t(5), t(7)), (t(9), None)]
    assert [
        _live_ids(h, t(d)) == want for d, want in [(4, {p}), (6, {s, p}), (8, {p}), (10, {s, p})]
    ] == [True] * 4
    assert [st.kind for st in h.history(p).steps] == ["supersede", "revert", "unrevert", "revert"]


def test_refusals_change_nothing(pipeline: Any, mistake: dict[str, str]) -> None:
    s, p = mistake["staging"], mistake["prod"]
    with pytest.raises(RevertRefused, match=f"memory {s} did not supersede anything"):
        revert(pipeline.store, s)
    with pytest.raises(RevertRefused, match="no memory with id"):
        revert(pipeline.store, "00000000-0000-0000-0000-000000000000")
    with pytest.raises(RevertRefused, match="neither a memory id"):
        revert(pipeline.store, "yesterday")
    with pytest.raises(RevertRefused, match="before the latest step"):
        revert(pipeline.store, p, at=t(2))
    first = revert(pipeline.store, p, at=t(5))
    with pytest.raises(
        RevertRefused, match=f"already reverted .* run `memsieve revert rev-{first.revision}`"
    ):
        revert(pipeline.store, p)
    with pytest.raises(RevertRefused, match="was already undone"):
        revert(pipeline.store, f"rev-{first.revision - 1}")
    assert len(History(pipeline.store).history(p).steps) == 2


def test_revert_refused_when_it_would_duplicate_live_text(
    pipeline: Any, mistake: dict[str, str]
) -> None:
    """Invariant 1: the hidden text was written again meanwhile; reviving it would make two."""
    again = write_at(
        pipeline,
        t(4),
        namespace=NS,
        event_id="e-staging-again",
        kind="retro",
        heading="Database port",
        content=STAGING,
    )
    assert again["decision"] in {"inserted", "superseded"}
    if again["decision"] == "superseded":
        pytest.skip("the gate folded the repeat into prod; nothing to test here")
    twin = str(again["memory_id"])
    with pytest.raises(
        RevertRefused, match=f"exactly the same text as memory {twin}, which is live"
    ):
        revert(pipeline.store, mistake["prod"], at=t(5))
    assert pipeline.store.get_memory(mistake["staging"])["deleted_at"] is not None
    assert _recalled(pipeline) == {PROD, STAGING}


def test_revived_row_can_be_superseded_again_and_the_chain_never_forks(
    pipeline: Any, mistake: dict[str, str]
) -> None:
    """Invariant 2: after a revert the revived row is an ordinary live row."""
    s, p = mistake["staging"], mistake["prod"]
    first = revert(pipeline.store, p, at=t(5))
    fix = write_at(
        pipeline,
        t(6),
        namespace=NS,
        event_id="e-staging-fix",
        heading="Database port",
        content="The staging database listens on port 6543 since the pooler.",
        supersedes=s,
    )
    assert fix["decision"] == "superseded" and str(fix["supersedes"]) == s
    with pytest.raises(
        RevertRefused, match=f"has since been superseded by memory {fix['memory_id']}.*fork"
    ):
        revert(pipeline.store, f"rev-{first.revision}", at=t(7))
    rows = db.query(
        pipeline.store,
        "SELECT supersedes::text AS s, count(*)::int AS n FROM memories"
        " WHERE supersedes IS NOT NULL GROUP BY 1",
    )
    assert all(r["n"] == 1 for r in rows)
    lin = History(pipeline.store).history(s)
    assert {v.memory_id for v in lin.live} == {p, str(fix["memory_id"])}
    assert lin.version(s).superseded_by == [p, str(fix["memory_id"])]


def test_revert_waits_for_the_namespace_write_lock(pipeline: Any, mistake: dict[str, str]) -> None:
    """It takes the write path's advisory lock, so it cannot interleave with a gate decision."""
    done = threading.Event()
    with psycopg.connect(pipeline.store.url) as conn, conn.transaction():
        conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('memsieve:ns:' || %s, 0))", (NS,)
        )
        worker = threading.Thread(
            target=lambda: (revert(pipeline.store, mistake["prod"]), done.set())
        )
        worker.start()
        time.sleep(0.5)
        assert not done.is_set()
        assert pipeline.store.get_memory(mistake["staging"])["deleted_at"] is not None
    worker.join(timeout=10)
    assert done.is_set()
    assert pipeline.store.get_memory(mistake["staging"])["deleted_at"] is None

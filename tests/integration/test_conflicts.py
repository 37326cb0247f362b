"""Three-way outcomes against real PostgreSQL: update -> conflict (default), a correction or
`newest` -> supersede with reason 'update', resolve, revert, recall marks. Exact counts."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from memsieve.gate import guards
from memsieve.gate.decide import Candidate, Incoming
from memsieve.gate.judge import Judgement, Verdict
from memsieve.history import conflicts, revert
from memsieve.store.postgres import InboxEvent, Pending, Store

from tests.support import db

D = 384
OLD = "Postgres listens on port 5432."
NEW = "Postgres listens on port 5433."  # one value changed: the guards' judge says update
REWORD = "Postgres now listens on port 5433."


def vec(*head: float) -> list[float]:
    return list(head) + [0.0] * (D - len(head))


A = vec(1.0)
B = vec(0.99, 0.141)  # ~0.01 from A
C = vec(0.98, 0.199)  # close to both
FAR = vec(0.0, 0.0, 1.0)


def _pending(
    store: Store, ns: str, eid: str, text: str, kind: str = "retro", target: str | None = None
) -> Pending:
    store.insert_events(
        [InboxEvent(eid, ns, kind, "", text, payload_hash=eid, target_memory=target)]
    )
    return next(p for p in store.claim_pending(ns, 100) if p.event_id == eid)


def _write(store: Store, ns: str, items: list[tuple[Pending, list[float]]], **kw: Any) -> list[Any]:
    return store.write_batch(ns, items, "m", D, lambda k: 0.4, guards.default_guards(), **kw)


def _live(store: Store, ns: str) -> list[str]:
    rows = db.query(
        store,
        "SELECT content FROM memories WHERE namespace = %s AND deleted_at IS NULL ORDER BY content",
        (ns,),
    )
    return [r["content"] for r in rows]


def _conflicts(store: Store) -> list[dict[str, Any]]:
    return db.query(
        store,
        "SELECT namespace, older_id::text AS older_id, newer_id::text AS newer_id, event_id,"
        " verdict, judge, score, detail, opened_at, closed_at, closed_how,"
        " loser_id::text AS loser_id FROM memory_conflicts ORDER BY id",
    )


def test_an_update_keeps_both_rows_live_linked_as_one_open_conflict(store: Store) -> None:
    old = _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])[0]
    new = _write(store, "ns", [(_pending(store, "ns", "e2", NEW), B)])[0]
    assert (old.decision, new.decision) == ("inserted", "inserted")
    assert new.reason.startswith("update of a live memory kept as a conflict: one value changed")
    assert _live(store, "ns") == [OLD, NEW]
    [c] = _conflicts(store)
    assert (c["namespace"], c["older_id"], c["newer_id"], c["event_id"]) == (
        "ns",
        old.memory_id,
        new.memory_id,
        "e2",
    )
    assert (c["verdict"], c["judge"], c["closed_at"], c["closed_how"]) == (
        "update",
        "guards",
        None,
        None,
    )
    assert "5433" in c["detail"] and "5432" in c["detail"]
    created = store.get_memory(new.memory_id)
    assert created is not None and c["opened_at"] == created["created_at"]
    # The decision record holds what the judge said.
    rec = store.get_event("e2")["decision_record"]  # type: ignore[index]
    assert rec["conflicts"] == [old.memory_id]
    assert rec["judge"] == "guards" and rec["on_conflict"] == "keep"
    assert (rec["verdict"], rec["score"], rec["verdict_judge"]) == ("update", 0.6, "guards")
    [cand] = rec["candidates"]
    assert (cand["memory_id"], cand["verdict"], cand["judge"]) == (
        old.memory_id,
        "update",
        "guards",
    )
    assert [o.event_id for o in conflicts.open_conflicts(store, "ns")] == ["e2"]
    assert conflicts.open_conflicts(store, "other") == []


def test_same_and_different_open_no_conflict(store: Store) -> None:
    _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])
    out = _write(
        store,
        "ns",
        [
            (_pending(store, "ns", "e2", "Postgres listens on port 5432 by default."), B),
            (_pending(store, "ns", "e3", "Postgres does not listen on port 5432 by default."), C),
        ],
    )
    assert [o.decision for o in out] == ["superseded", "inserted"]
    assert out[1].reason.startswith("close candidate kept: negation")
    assert _conflicts(store) == []


def test_a_correction_judged_an_update_of_one_memory_supersedes_it_with_reason_update(
    store: Store,
) -> None:
    old = _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])[0]
    out = _write(store, "ns", [(_pending(store, "ns", "e2", NEW, kind="correction"), B)])[0]
    assert (out.decision, out.supersedes, out.reason) == ("superseded", old.memory_id, "update")
    assert _live(store, "ns") == [NEW]
    assert _conflicts(store) == []
    [rev] = db.query(store, "SELECT kind, reason, older_id::text AS o FROM memory_revisions")
    assert (rev["kind"], rev["reason"], rev["o"]) == ("supersede", "update", old.memory_id)
    rec = store.get_event("e2")["decision_record"]  # type: ignore[index]
    assert (rec["verdict"], rec["reason"]) == ("update", "update")


def test_a_correction_updating_two_memories_keeps_both_conflicts(store: Store) -> None:
    _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])
    _write(store, "ns", [(_pending(store, "ns", "e2", "Postgres listens on port 6000."), C)])
    out = _write(store, "ns", [(_pending(store, "ns", "e3", NEW, kind="correction"), B)])[0]
    assert out.decision == "inserted"
    assert len(_live(store, "ns")) == 3
    # e2 vs e1 and e3 vs each of them.
    assert len([c for c in _conflicts(store) if c["closed_at"] is None]) == 3


def test_on_conflict_newest_supersedes_with_reason_update(store: Store) -> None:
    old = _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])[0]
    out = _write(store, "ns", [(_pending(store, "ns", "e2", NEW), B)], on_conflict="newest")[0]
    assert (out.decision, out.supersedes, out.reason) == ("superseded", old.memory_id, "update")
    assert _live(store, "ns") == [NEW]
    assert _conflicts(store) == []
    assert store.get_event("e2")["decision_record"]["on_conflict"] == "newest"  # type: ignore[index]


def test_a_correction_naming_a_conflict_member_closes_it_with_reason_update(store: Store) -> None:
    old = _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])[0]
    new = _write(store, "ns", [(_pending(store, "ns", "e2", NEW), B)])[0]
    fix = "Postgres listens on port 5433 since the move."
    out = _write(
        store,
        "ns",
        [(_pending(store, "ns", "e3", fix, kind="correction", target=old.memory_id), FAR)],
    )[0]
    assert (out.decision, out.supersedes, out.reason) == ("superseded", old.memory_id, "update")
    [c] = _conflicts(store)
    assert (c["closed_how"], c["loser_id"]) == ("update", old.memory_id)
    assert c["closed_at"] == store.get_memory(out.memory_id)["created_at"]  # type: ignore[index]
    assert sorted(_live(store, "ns")) == sorted([NEW, fix])
    assert conflicts.open_conflicts(store) == []
    assert new.memory_id in {m for m in (c["older_id"], c["newer_id"])}


def test_a_correction_naming_one_member_stays_in_conflict_with_the_other(store: Store) -> None:
    """Alpha and Beta conflict; a correction names Beta and says Gamma: Beta is hidden, and
    Alpha, which the correction updates too, stays live linked to it (not silently beside
    it, as a black-box probe found: `conflicts` said none while recall showed both)."""
    old = _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])[0]
    new = _write(store, "ns", [(_pending(store, "ns", "e2", NEW), B)])[0]
    fix = "Postgres listens on port 6000."
    out = _write(
        store,
        "ns",
        [(_pending(store, "ns", "e3", fix, kind="correction", target=new.memory_id), C)],
    )[0]
    assert (out.decision, out.supersedes, out.reason) == ("superseded", new.memory_id, "update")
    assert sorted(_live(store, "ns")) == sorted([OLD, fix])
    [c] = conflicts.open_conflicts(store, "ns")
    assert {c.older_id, c.newer_id} == {old.memory_id, out.memory_id}
    rows = _conflicts(store)
    assert [(r["older_id"], r["newer_id"], r["closed_how"]) for r in rows if r["closed_at"]] == [
        (old.memory_id, new.memory_id, "update")
    ]


def test_a_correction_with_a_live_text_says_its_target_was_not_acted_on(store: Store) -> None:
    old = _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])[0]
    new = _write(store, "ns", [(_pending(store, "ns", "e2", NEW), B)])[0]
    out = _write(
        store,
        "ns",
        [(_pending(store, "ns", "e3", NEW, kind="correction", target=old.memory_id), B)],
    )[0]
    assert (out.decision, out.memory_id) == ("merged", new.memory_id)
    assert f"the correction's target {old.memory_id} was not acted on" in out.reason
    assert len(conflicts.open_conflicts(store, "ns")) == 1
    from memsieve.history import explain

    text = explain.explain(store, "e3", "ns").text
    assert f"The correction named memory {old.memory_id} as the one it replaces" in text


def test_a_rewording_of_a_member_closes_the_conflict_and_opens_one_with_the_rewording(
    store: Store,
) -> None:
    old = _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])[0]
    new = _write(store, "ns", [(_pending(store, "ns", "e2", NEW), B)])[0]
    again = _write(store, "ns", [(_pending(store, "ns", "e3", REWORD), C)])[0]
    assert (again.decision, again.supersedes) == ("superseded", new.memory_id)
    rows = _conflicts(store)
    assert [(r["closed_how"], r["loser_id"]) for r in rows] == [
        ("superseded", new.memory_id),
        (None, None),
    ]
    assert (rows[1]["older_id"], rows[1]["newer_id"]) == (old.memory_id, again.memory_id)


def test_resolve_supersedes_the_loser_and_revert_reopens_the_conflict(store: Store) -> None:
    old = _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])[0]
    new = _write(store, "ns", [(_pending(store, "ns", "e2", NEW), B)])[0]
    [open_one] = conflicts.open_conflicts(store, "ns")
    res = conflicts.resolve(store, open_one.id, "newer", actor="ana", note="moved in March")
    closed = conflicts.get(store, open_one.id)
    assert closed is not None and (closed.closed_by, closed.note) == ("ana", "moved in March")
    assert (res.winner_id, res.loser_id) == (new.memory_id, old.memory_id)
    assert "memsieve revert" in res.text
    assert _live(store, "ns") == [NEW]
    [c] = _conflicts(store)
    assert (c["closed_how"], c["loser_id"], c["closed_at"]) == ("resolved", old.memory_id, res.at)
    rev = db.query(
        store,
        "SELECT kind, reason, actor, newer_id::text AS n, older_id::text AS o FROM memory_revisions",
    )
    assert rev == [
        {
            "kind": "supersede",
            "reason": "update",
            "actor": "ana",
            "n": new.memory_id,
            "o": old.memory_id,
        }
    ]
    with pytest.raises(conflicts.ResolveRefused, match="already closed"):
        conflicts.resolve(store, open_one.id, "older")
    # Revertible: the loser is back and so is the contradiction.
    revert.revert(store, new.memory_id, actor="ben")
    assert _live(store, "ns") == [OLD, NEW]
    [c] = _conflicts(store)
    assert (c["closed_at"], c["closed_how"], c["loser_id"]) == (None, None, None)
    reopened = conflicts.get(store, open_one.id)
    assert reopened is not None and (reopened.closed_by, reopened.note) == (None, None)
    # ...and the older one may win the second time.
    res2 = conflicts.resolve(store, open_one.id, old.memory_id)
    assert (res2.winner_id, _live(store, "ns")) == (old.memory_id, [OLD])


def test_resolve_refuses_bad_requests_and_changes_nothing(store: Store) -> None:
    _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])
    _write(store, "ns", [(_pending(store, "ns", "e2", NEW), B)])
    [c] = conflicts.open_conflicts(store, "ns")
    with pytest.raises(conflicts.ResolveRefused, match="no conflict 999"):
        conflicts.resolve(store, 999, "newer")
    with pytest.raises(conflicts.ResolveRefused, match="the winner must be"):
        conflicts.resolve(store, c.id, "both")
    assert _live(store, "ns") == [OLD, NEW]
    assert len(conflicts.open_conflicts(store)) == 1


def test_resolve_refuses_a_winner_that_already_superseded_a_memory(store: Store) -> None:
    _write(store, "ns", [(_pending(store, "ns", "e0", "Postgres listens on 5432."), A)])
    _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])  # supersedes e0
    _write(store, "ns", [(_pending(store, "ns", "e2", NEW), B)])
    [c] = conflicts.open_conflicts(store, "ns")
    with pytest.raises(conflicts.ResolveRefused, match="already replaced another memory"):
        conflicts.resolve(store, c.id, "older")
    assert len(_live(store, "ns")) == 2


def test_recall_puts_the_newer_first_and_marks_the_conflict(store: Store) -> None:
    old = _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])[0]
    new = _write(store, "ns", [(_pending(store, "ns", "e2", NEW), B)])[0]
    [c] = conflicts.open_conflicts(store, "ns")
    # Asked with the old memory's own vector: the newer comes first anyway.
    hits = store.recall("ns", A, "m", 5)
    assert [h["memory_id"] for h in hits] == [new.memory_id, old.memory_id]
    assert hits[0]["conflicts"] == [
        {"conflict_id": c.id, "with": old.memory_id, "this_is": "newer", "detail": c.detail}
    ]
    assert hits[1]["conflicts"][0]["this_is"] == "older"
    # k=1 still brings the newer member in, before the older one.
    assert [h["memory_id"] for h in store.recall("ns", A, "m", 1)] == [
        new.memory_id,
        old.memory_id,
    ]
    conflicts.resolve(store, c.id, "newer")
    hits = store.recall("ns", A, "m", 5)
    assert [(h["memory_id"], h["conflicts"]) for h in hits] == [(new.memory_id, [])]


class _Scripted:
    """A judge with fixed answers, to drive the gate's routing (the judge's own quality is
    tested in tests/unit/test_judge.py)."""

    name = "scripted"

    def __init__(self, verdicts: dict[str, Verdict]) -> None:
        self.verdicts = verdicts
        self.calls = 0

    def __call__(self, pairs: Sequence[tuple[Incoming, Candidate]]) -> list[Judgement]:
        self.calls += 1
        return [
            Judgement(self.verdicts.get(i.content, Verdict.DIFFERENT), 0.9, self.name, "scripted")
            for i, _ in pairs
        ]


def test_a_batch_is_judged_in_one_call_and_later_events_see_earlier_decisions(
    store: Store,
) -> None:
    judge = _Scripted({"b": Verdict.UPDATE, "c": Verdict.SAME})
    out = _write(
        store,
        "ns",
        [
            (_pending(store, "ns", "e1", "a"), A),
            (_pending(store, "ns", "e2", "b"), B),
            (_pending(store, "ns", "e3", "c"), C),
        ],
        judge=judge,
    )
    assert judge.calls == 1
    assert [o.decision for o in out] == ["inserted", "inserted", "superseded"]
    # c is the same fact as the closest live row (b, inserted by this batch) and hides it;
    # the conflict a-b closes with it.
    assert out[2].supersedes == out[1].memory_id
    rows = _conflicts(store)
    assert [(r["older_id"], r["newer_id"], r["closed_how"]) for r in rows] == [
        (out[0].memory_id, out[1].memory_id, "superseded")
    ]
    assert rows[0]["judge"] == "scripted"
    assert _live(store, "ns") == ["a", "c"]


def test_explain_and_history_show_the_conflict_and_its_resolution(store: Store) -> None:
    from memsieve.history import explain, lineage

    old = _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])[0]
    new = _write(store, "ns", [(_pending(store, "ns", "e2", NEW), B)])[0]
    [c] = conflicts.open_conflicts(store, "ns")
    ex = explain.explain(store, new.memory_id)
    assert f"which it updates (judge guards: {c.detail})" in ex.text
    assert "both stay live, linked as a conflict" in ex.text
    assert f"Conflict {c.id} (opened " in ex.text
    assert f"open: `memsieve resolve {c.id} --winner newer|older`" in ex.text
    assert [x["id"] for x in ex.facts["conflicts"]] == [c.id]
    lin = lineage.lineage(store, old.memory_id)
    assert lin is not None and [x["id"] for x in lin.conflicts] == [c.id]
    assert f"conflict {c.id}: {new.memory_id[:8]} updates v1" in lin.text
    assert f"OPEN: `memsieve resolve {c.id} --winner newer|older`" in lin.text

    conflicts.resolve(store, c.id, "newer", actor="ana")
    lin = lineage.lineage(store, old.memory_id)
    assert lin is not None and [v.memory_id for v in lin.versions] == [
        old.memory_id,
        new.memory_id,
    ]
    assert "v2 superseded v1: v1 hidden from recall as an update (resolved by ana)" in lin.text
    assert f"conflict {c.id}: v2 updates v1" in lin.text and "(resolved; v1 hidden)" in lin.text
    ex = explain.explain(store, old.memory_id)
    assert "(resolved): this memory was hidden." in ex.text
    assert "superseded it (a resolve by ana)" in ex.text and "event None" not in ex.text
    assert f"`memsieve revert {new.memory_id}`" in ex.text


def test_explain_says_why_an_update_superseded(store: Store) -> None:
    from memsieve.history import explain

    old = _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])[0]
    new = _write(store, "ns", [(_pending(store, "ns", "e2", NEW, kind="correction"), B)])[0]
    text = explain.explain(store, new.memory_id).text
    assert f"replaced memory {old.memory_id[:8]}" in text
    assert "as an update (a correction judged an update of exactly this one live memory" in text
    assert "judge guards: one value changed" in text


def test_as_of_recall_sees_the_loser_live_until_the_resolution(store: Store) -> None:
    from memsieve.history import lineage

    old = _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])[0]
    new = _write(store, "ns", [(_pending(store, "ns", "e2", NEW), B)])[0]
    [c] = conflicts.open_conflicts(store, "ns")
    res = conflicts.resolve(store, c.id, "newer")
    before = res.at - timedelta(microseconds=1)
    got = lineage.recall_as_of(store, "ns", A, "m", before, 5)
    assert sorted(r.memory_id for r in got) == sorted([old.memory_id, new.memory_id])
    got = lineage.recall_as_of(store, "ns", A, "m", res.at, 5)
    assert [r.memory_id for r in got] == [new.memory_id]


def test_as_of_recall_marks_the_conflicts_open_then_the_newer_first(store: Store) -> None:
    """As plain recall does, for the conflicts open at T (a black-box probe found as-of
    recall marking none, the stale value first, even with T = now)."""
    from memsieve.history import lineage

    old = _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])[0]
    new = _write(store, "ns", [(_pending(store, "ns", "e2", NEW), B)])[0]
    [c] = conflicts.open_conflicts(store, "ns")
    opened = store.get_memory(new.memory_id)["created_at"]  # type: ignore[index]
    got = lineage.recall_as_of(store, "ns", A, "m", opened, 1)  # k=1 brings the newer in
    assert [r.memory_id for r in got] == [new.memory_id, old.memory_id]
    assert got[0].conflicts == [
        {"conflict_id": c.id, "with": old.memory_id, "this_is": "newer", "detail": c.detail}
    ]
    assert got[1].conflicts[0]["this_is"] == "older"
    before = opened - timedelta(microseconds=1)
    got = lineage.recall_as_of(store, "ns", A, "m", before, 5)
    assert [(r.memory_id, r.conflicts) for r in got] == [(old.memory_id, [])]
    res = conflicts.resolve(store, c.id, "newer")
    got = lineage.recall_as_of(store, "ns", A, "m", res.at, 5)
    assert [(r.memory_id, r.conflicts) for r in got] == [(new.memory_id, [])]
    # Before the resolution the conflict was open, and as-of recall still says so.
    got = lineage.recall_as_of(store, "ns", A, "m", res.at - timedelta(microseconds=1), 5)
    assert [len(r.conflicts) for r in got] == [1, 1]


def test_the_history_api_lists_and_resolves_conflicts(store: Store) -> None:
    from memsieve.history.api import History

    h = History(store)
    old = _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])[0]
    new = _write(store, "ns", [(_pending(store, "ns", "e2", NEW), B)])[0]
    [c] = h.conflicts("ns")
    assert (c.older_id, c.newer_id, c.older_content, c.newer_content) == (
        old.memory_id,
        new.memory_id,
        OLD,
        NEW,
    )
    res = h.resolve(c.id, "older", actor="agent-7")
    assert (res.winner_id, res.loser_id, res.actor) == (old.memory_id, new.memory_id, "agent-7")
    assert h.conflicts() == [] and _live(store, "ns") == [OLD]


def test_a_judge_that_fails_costs_no_event_and_hides_nothing(store: Store) -> None:
    class Down:
        name = "llm:down"

        def __call__(self, pairs: Sequence[tuple[Incoming, Candidate]]) -> list[Judgement]:
            raise ConnectionError("no route to the judge")

    _write(store, "ns", [(_pending(store, "ns", "e1", OLD), A)])
    out = _write(
        store,
        "ns",
        [(_pending(store, "ns", "e2", NEW), B), (_pending(store, "ns", "e3", OLD), A)],
        judge=Down(),
    )
    assert [o.decision for o in out] == ["inserted", "merged"]
    assert _live(store, "ns") == [OLD, NEW] and _conflicts(store) == []
    rec = store.get_event("e2")["decision_record"]  # type: ignore[index]
    assert rec["candidates"][0]["judge_detail"] == (
        "judge failed (it raised ConnectionError): both rows kept"
    )
    assert db.query(store, "SELECT count(*)::int AS n FROM events WHERE status = 'written'") == [
        {"n": 3}
    ]

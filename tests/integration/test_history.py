"""A scripted month of corrections, written through the real gate at fixed times; as-of
answers, history in both directions and explanations are checked exactly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from memsieve.history.api import History
from memsieve.history.format import parse_time

from tests.support.history import write_at

NS = "deploys"


def t(day: int, hour: int = 9, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2026, 1, day, hour, minute, second, tzinfo=UTC)


@pytest.fixture
def month(pipeline: Any) -> dict[str, str]:
    """The script: what happened in January, and the ids it produced."""
    ids: dict[str, str] = {}

    def w(name: str, when: datetime, **event: Any) -> dict[str, Any]:
        row = write_at(pipeline, when, namespace=NS, event_id=f"e-{name}", **event)
        ids[name] = str(row["memory_id"])
        return row

    w(
        "a1",
        t(2),
        kind="retro",
        heading="Deploy day",
        content="Deploys to production run on Fridays after the code freeze.",
        source={"agent": "ci-bot"},
    )
    w(
        "b1",
        t(5),
        kind="retro",
        heading="Staging database",
        content="The staging database listens on port 5433, not the default.",
    )
    row = w(
        "a2",
        t(12),
        heading="Deploy day",
        content="Deploys to production run on Tuesdays after the code freeze.",
        supersedes=ids["a1"],
        source={"agent": "alice"},
    )
    assert row["decision"] == "superseded"
    row = w(
        "b1-again",
        t(15),
        kind="retro",
        heading="Staging database",
        content="The staging database listens on port 5433, not the default.",
    )
    assert row["decision"] == "merged" and ids["b1-again"] == ids["b1"]
    # A reworded repeat, caught by distance alone (no explicit target).
    row = w(
        "a3",
        t(19),
        kind="retro",
        heading="Deploy day",
        content="Deploys to production run on Tuesdays after the code freeze ends.",
    )
    assert row["decision"] == "superseded", row
    assert str(row["supersedes"]) == ids["a2"]
    row = w(
        "b2",
        t(26),
        heading="Staging database",
        content="The staging database moved to port 6543 with the new pooler.",
        supersedes=ids["b1"],
    )
    assert row["decision"] == "superseded"
    row = w(
        "c1",
        t(28),
        kind="failure",
        heading="Flaky upload test",
        content="test_upload fails on CI when the bucket is cold; one retry is enough.",
    )
    assert row["decision"] == "inserted"
    return ids


def _live(h: History, when: datetime) -> set[str]:
    return {r["memory_id"] for r in h.live_as_of(NS, when)}


def test_as_of_answers_on_chosen_dates(pipeline: Any, month: dict[str, str]) -> None:
    h = History(pipeline.store, pipeline.embedder)
    m = month
    expected = {
        t(1): set(),
        t(2): {m["a1"]},  # created exactly then: live
        t(2) - timedelta(microseconds=1): set(),
        t(10): {m["a1"], m["b1"]},
        t(12) - timedelta(seconds=1): {m["a1"], m["b1"]},
        t(12): {m["a2"], m["b1"]},  # the supersede instant: the newer one only
        t(16): {m["a2"], m["b1"]},  # the merge on the 15th changed nothing
        t(20): {m["a3"], m["b1"]},
        t(26, 8): {m["a3"], m["b1"]},
        t(27): {m["a3"], m["b2"]},
        t(31, 23, 59): {m["a3"], m["b2"], m["c1"]},
    }
    for when, want in expected.items():
        assert _live(h, when) == want, when

    def top(query: str, when: datetime) -> str:
        return h.recall_as_of(NS, query, when, k=1)[0].content

    q = "which day do deploys to production run"
    assert "Fridays" in top(q, t(10))
    assert "Tuesdays after the code freeze." in top(q, t(16))
    assert top(q, t(20)).endswith("freeze ends.")
    assert "5433" in top("staging database port", t(20))
    assert "6543" in top("staging database port", t(27))
    # Answers come only from rows live then, however many are asked for.
    assert {r.memory_id for r in h.recall_as_of(NS, q, t(16), k=10)} == {m["a2"], m["b1"]}


def test_plain_recall_is_unchanged(pipeline: Any, month: dict[str, str]) -> None:
    vec = pipeline.embedder.embed(["deploy day"])[0]
    got = {r["memory_id"] for r in pipeline.store.recall(NS, vec, pipeline.embedder.model, 10)}
    assert got == {month["a3"], month["b2"], month["c1"]}


def test_history_walks_both_directions_and_marks_the_live_version(
    pipeline: Any, month: dict[str, str]
) -> None:
    h = History(pipeline.store)
    for start in ("a1", "a2", "a3"):
        lin = h.history(month[start])
        assert [v.memory_id for v in lin.versions] == [month["a1"], month["a2"], month["a3"]]
        assert [v.memory_id for v in lin.live] == [month["a3"]]
    lin = h.history(month["a2"])
    v1, v2, v3 = lin.versions
    assert v2.supersedes == month["a1"] and v2.superseded_by == [month["a3"]]
    assert v1.intervals == [(t(2), t(12))] and v3.intervals == [(t(19), None)]
    assert [(s.kind, s.at) for s in lin.steps] == [("supersede", t(12)), ("supersede", t(19))]
    text = lin.text
    assert "3 versions, oldest first; 1 live now" in text
    assert "v2  " + month["a2"] + "  hidden  <- you asked about this one" in text
    assert "live: 2026-01-02 09:00 UTC → 2026-01-12 09:00 UTC" in text


def test_decision_record_is_complete_for_every_write(pipeline: Any, month: dict[str, str]) -> None:
    store = pipeline.store
    merged = store.get_event("e-b1-again")
    rec = merged["decision_record"]
    assert rec["action"] == "merge" and rec["target"] == month["b1"]
    assert rec["candidates"] == [
        {
            "memory_id": month["b1"],
            "distance": 0.0,
            "within_threshold": True,
            "identical": True,
            "vetoes": [],
        }
    ]
    assert rec["embedding_model"] == pipeline.embedder.model
    a3 = store.get_memory(month["a3"])["decision"]
    assert a3["action"] == "supersede" and a3["target"] == month["a2"]
    assert a3["distance"] < a3["threshold"]
    assert a3["candidates"][0]["memory_id"] == month["a2"]
    assert a3["guards"] and a3["neighbours_searched"] == 3
    assert store.get_event("e-a3")["decision_record"] == a3


def test_explain_says_why_in_plain_words(pipeline: Any, month: dict[str, str]) -> None:
    h = History(pipeline.store)
    m = month
    text = h.explain(m["a3"]).text
    assert text.startswith(f"Memory {m['a3'][:8]} ('Deploy day: Deploys to production run on")
    assert "exists because event e-a3 (retro, 2026-01-19 09:00 UTC) superseded memory " in text
    assert f"memory {m['a2'][:8]} ('Deploy day:" in text
    assert "< threshold 0.350 (hashing-v1-384), no guard objected" in text
    assert text.endswith("It is live.")

    text = h.explain(m["a2"]).text
    assert "the correction named that memory as the one it corrects" in text
    assert "event e-a2 (correction from agent alice, 2026-01-12 09:00 UTC)" in text
    assert f"memory {m['a3'][:8]}" in text and "superseded it (event e-a3)" in text
    assert "It is not live (hidden since 2026-01-19 09:00 UTC)" in text
    assert f"`memsieve revert {m['a3']}`" in text

    text = h.explain(m["b1"]).text
    assert "there was no live memory in the namespace" not in text  # a1 was live then
    assert "was stored as a new memory: the closest live memory" in text
    assert "1 later event(s) carried exactly the same text" in text and "e-b1-again" in text

    ex = h.explain("e-b1-again")
    assert ex.subject == "event" and ex.outcome == "merged"
    assert "was merged into memory" in ex.text and "byte-identical" in ex.text


def test_ids_in_upper_case_or_without_dashes_name_the_same_memory(
    pipeline: Any, month: dict[str, str]
) -> None:
    """As `supersedes` accepts them (a black-box probe saw explain crash on them)."""
    h = History(pipeline.store)
    canonical = month["a2"]
    for asked in (
        canonical.upper(),
        canonical.replace("-", ""),
        canonical.upper().replace("-", ""),
    ):
        assert h.explain(asked).text == h.explain(canonical).text
        text = h.history(asked).text
        assert "v2  " + canonical + "  hidden  <- you asked about this one" in text


def test_write_now_says_why_an_event_was_refused(pipeline: Any) -> None:
    out = pipeline.write_now({"namespace": "C1", "kind": "retro", "heading": "h", "content": "x"})
    assert (out["decision"], out["reason"]) == ("rejected", "invalid_event")
    assert "namespace must match" in out["detail"]
    ok = pipeline.write_now(
        {"namespace": NS, "kind": "retro", "heading": "Ports", "content": "Redis runs on 6380."}
    )
    assert ok["decision"] == "inserted" and "detail" not in ok


def test_explain_rejected_dead_and_unknown(pipeline: Any) -> None:
    from memsieve import errors

    acc = pipeline.accept([{"namespace": NS, "kind": "retro", "heading": "x", "content": "short"}])
    ex = History(pipeline.store).explain(acc[0].event_id)
    assert ex.outcome == "rejected"
    assert "was rejected at capture" in ex.text and "Nothing from it was stored" in ex.text
    with pytest.raises(errors.PermanentError, match="no memory or event with id nope"):
        History(pipeline.store).explain("nope")


def test_parse_time() -> None:
    assert parse_time("2026-01-15") == datetime(2026, 1, 15, tzinfo=UTC)
    assert parse_time("2026-01-15T09:30") == datetime(2026, 1, 15, 9, 30, tzinfo=UTC)
    assert parse_time("2026-01-15T09:30Z") == datetime(2026, 1, 15, 9, 30, tzinfo=UTC)
    from memsieve import errors

    with pytest.raises(errors.ConfigError, match="is not a date or time"):
        parse_time("last tuesday")


def test_the_api_finds_the_embedded_store_as_the_cli_does(
    settings: Any, store: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No MEMSIEVE_DATABASE_URL: the URL comes from the embedded services' state file under
    MEMSIEVE_HOME, as for the CLI; with none running, a clear error, never a connection to
    whatever PostgreSQL libpq reaches by default (no pgvector there: a 30 s pool timeout)."""
    import json
    from dataclasses import replace

    from memsieve.errors import ConfigError

    bare = replace(settings, database_url=None, redis_url=None, broker_url=None)
    bare.state_file.parent.mkdir(parents=True, exist_ok=True)
    bare.state_file.write_text(
        json.dumps({"database_url": settings.database_url, "redis_url": settings.redis_url})
    )
    h = History.from_settings(bare)
    try:
        assert h.recall_as_of("nowhere", "anything", datetime.now(UTC)) == []
    finally:
        h.store.close()
    bare.state_file.unlink()
    with pytest.raises(ConfigError, match="memsieve up"):
        History.from_settings(bare)


def test_only_a_correction_may_name_the_memory_it_replaces(pipeline: Any) -> None:
    """A retro naming an unrelated live memory in `supersedes` would have hidden it
    ('correction names this memory' at distance 0.95): only a correction overrides the
    gate; another kind is decided as any event, and the named memory stays live."""
    old = write_at(
        pipeline,
        datetime(2026, 3, 1, tzinfo=UTC),
        namespace="corr",
        event_id="oncall",
        kind="pattern",
        heading="On-call",
        content="The platform team owns the pager rotation for the payments cluster.",
    )
    retro = write_at(
        pipeline,
        datetime(2026, 3, 2, tzinfo=UTC),
        namespace="corr",
        event_id="retro-naming",
        kind="retro",
        heading="x",
        content="A retro about the flaky login test that names a memory it does not correct.",
        supersedes=str(old["memory_id"]),
    )
    assert retro["decision"] == "inserted"
    live = {
        r["memory_id"]
        for r in History(pipeline.store, pipeline.embedder).live_as_of("corr", datetime.now(UTC))
    }
    assert str(old["memory_id"]) in live
    fixed = write_at(
        pipeline,
        datetime(2026, 3, 3, tzinfo=UTC),
        namespace="corr",
        event_id="correction-naming",
        heading="On-call",
        content="The SRE team owns the pager rotation for the payments cluster now.",
        supersedes=str(old["memory_id"]),
    )
    assert fixed["decision"] == "superseded"

"""Event ids are per namespace (issue 13): `explain`, the MCP tools and the backfill summary
look an event up under its namespace, and never show another tenant's event."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from memsieve import errors
from memsieve.history import explain
from memsieve.mcp.backend import Backend, Scope, ToolRefusal
from memsieve.settings import Settings

from tests.support import cli as support_cli

MINE = "Pin the base image of the fields service."
THEIRS = "Tenant b rotates its signing key every Monday."


def _event(ns: str, content: str, event_id: str = "e-1") -> dict[str, Any]:
    return {
        "namespace": ns,
        "kind": "retro",
        "heading": "Lesson",
        "content": content,
        "event_id": event_id,
    }


def _shared_id(pipeline: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Tenant b writes e-1 first (the older row), then namespace fields its own e-1."""
    theirs = pipeline.write_now(_event("tenant-b", THEIRS))
    mine = pipeline.write_now(_event("fields", MINE))
    assert (theirs["decision"], mine["decision"]) == ("inserted", "inserted")
    return mine, theirs


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return support_cli.run(env, *args)


def test_events_of_a_shared_event_id_needs_its_namespace(
    pipeline: Any, env: dict[str, str]
) -> None:
    mine, theirs = _shared_id(pipeline)
    out = _cli(env, "events", "--event-id", "e-1", "--json")
    assert out.returncode == 1
    assert "event id e-1 is used in 2 namespaces" in out.stderr and "--namespace" in out.stderr
    for leak in ("tenant-b", THEIRS, MINE, theirs["memory_id"], mine["memory_id"]):
        assert leak not in out.stdout + out.stderr
    out = _cli(env, "events", "--event-id", "e-1", "--namespace", "fields", "--json")
    assert out.returncode == 0, out.stderr
    assert [(r["namespace"], r["memory_id"]) for r in json.loads(out.stdout)] == [
        ("fields", mine["memory_id"])
    ]
    # An id only one namespace uses needs no namespace.
    pipeline.write_now(_event("fields", "Only fields uses this id for its lesson.", "e-2"))
    out = _cli(env, "events", "--event-id", "e-2", "--json")
    assert out.returncode == 0, out.stderr
    assert [r["namespace"] for r in json.loads(out.stdout)] == ["fields"]


def test_explain_of_a_shared_event_id_needs_its_namespace(
    pipeline: Any, env: dict[str, str]
) -> None:
    mine, theirs = _shared_id(pipeline)
    # Without a namespace: refused, saying why, naming neither tenant nor showing either text.
    out = _cli(env, "explain", "e-1")
    assert out.returncode == 1
    assert "used in 2 namespaces" in out.stderr and "--namespace" in out.stderr
    for leak in ("tenant-b", THEIRS, MINE, theirs["memory_id"][:8], mine["memory_id"][:8]):
        assert leak not in out.stdout + out.stderr
    # With it: that namespace's event, never the other's (which is the older row).
    out = _cli(env, "explain", "e-1", "--namespace", "fields", "--json")
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert found["facts"]["event"]["namespace"] == "fields"
    assert found["facts"]["event"]["memory_id"] == mine["memory_id"]
    assert THEIRS not in out.stdout and theirs["memory_id"] not in out.stdout
    out = _cli(env, "explain", "e-1", "--namespace", "tenant-b", "--json")
    assert json.loads(out.stdout)["facts"]["event"]["memory_id"] == theirs["memory_id"]
    # An id only one namespace uses needs no namespace; a wrong one finds nothing.
    pipeline.write_now(_event("fields", "Only fields uses this id for its lesson.", "e-2"))
    assert explain.explain(pipeline.store, "e-2").facts["event"]["namespace"] == "fields"
    with pytest.raises(errors.PermanentError, match="in namespace 'tenant-b'"):
        explain.explain(pipeline.store, "e-2", "tenant-b")
    # A memory explains the event of its own namespace, not the older one of the same id.
    m = explain.explain(pipeline.store, mine["memory_id"])
    assert m.facts["event"]["namespace"] == "fields"
    assert str(m.facts["event"]["memory_id"]) == mine["memory_id"]
    # A memory id asked under another namespace is not found.
    with pytest.raises(errors.PermanentError):
        explain.explain(pipeline.store, theirs["memory_id"], "fields")


def test_mcp_explain_sees_only_its_scope(settings: Settings, pipeline: Any) -> None:
    mine, theirs = _shared_id(pipeline)
    backend = Backend(settings, Scope(("fields",)), worker="no")
    try:
        # The other tenant's e-1 (older) is neither shown nor a reason to refuse.
        out = backend.explain(id="e-1")
        assert out["facts"]["event"]["namespace"] == "fields"
        assert out["facts"]["event"]["memory_id"] == mine["memory_id"]
        text = json.dumps(out)
        assert THEIRS not in text and theirs["memory_id"] not in text and "tenant-b" not in text
        with pytest.raises(ToolRefusal, match="outside this server's scope"):
            backend.explain(id="e-1", namespace="tenant-b")
        with pytest.raises(ToolRefusal, match="no memory or event"):
            backend.explain(id=theirs["memory_id"])
        with pytest.raises(ToolRefusal, match="no memory with id"):
            backend.history(memory_id=theirs["memory_id"])
        assert backend.history(memory_id=mine["memory_id"])["memory_id"] == mine["memory_id"]
    finally:
        backend.close()
    # A server of both namespaces asks which one is meant, and answers when told.
    both = Backend(settings, Scope(("fields", "tenant-b")), worker="no")
    try:
        with pytest.raises(ToolRefusal, match="more than one namespace"):
            both.explain(id="e-1")
        out = both.explain(id="e-1", namespace="tenant-b")
        assert out["facts"]["event"]["memory_id"] == theirs["memory_id"]
    finally:
        both.close()


def test_backfill_summary_counts_its_own_namespaces_rows(
    tmp_path: Any, pipeline: Any, store: Any
) -> None:
    from memsieve.ops import backfill as bf

    # Another tenant already used the ids this backfill gives; namespace fields used r-2
    # for another payload, so this backfill's r-2 is a reuse, recorded as its own row.
    for n in (1, 2, 3):
        pipeline.write_now(_event("tenant-b", f"Tenant b lesson {n}: keep it.", f"r-{n}"))
    pipeline.write_now(_event("fields", "The first lesson ever filed under r-2.", "r-2"))
    lines = [_event("fields", f"Backfilled lesson {n}: pin release {n}.", f"r-{n}") for n in (1, 2)]
    lines.append(_event("fields", "Backfilled lesson 3: pin release 3.", "r-3"))
    f = tmp_path / "old.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    items = bf.read_source(f, None)
    assert [(i.namespace, i.event_id) for i in items] == [("fields", f"r-{n}") for n in (1, 2, 3)]
    # Nothing of this backfill is in the ledger yet: tenant b's rows and the earlier r-2
    # are not its events.
    s = bf.summarize(store, items)
    assert (s.events, s.unseen, sum(s.written.values()), sum(s.rejected.values())) == (3, 3, 0, 0)
    accepted = pipeline.accept([i.payload for i in items])
    assert [(a.status, a.reason) for a in accepted] == [
        ("pending", None),
        ("rejected", "event_id_reused"),
        ("pending", None),
    ]
    s = bf.summarize(store, items)
    assert (s.unseen, s.pending, dict(s.rejected)) == (0, 2, {"event_id_reused": 1})
    pipeline.flush("fields")
    s = bf.summarize(store, items)
    assert (s.unseen, s.pending, s.written["inserted"], dict(s.rejected)) == (
        0,
        0,
        2,
        {"event_id_reused": 1},
    )
    assert [
        (it.event_id, r["event_id"], r["status"]) for it, r in bf.ledger_rows(store, items)
    ] == [
        ("r-1", "r-1", "written"),
        ("r-2", accepted[1].event_id, "rejected"),
        ("r-3", "r-3", "written"),
    ]

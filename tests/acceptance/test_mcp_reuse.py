"""MCP `remember` reports its own ledger row (issue 13): a payload that reuses an event id of
its namespace is answered with its `rejected / event_id_reused` row, never with the outcome
of the event whose id it reused; another tenant's event of the same id is not consulted."""

from __future__ import annotations

from typing import Any

from memsieve.mcp.backend import Backend, Scope
from memsieve.settings import Settings

from tests.support import db


def test_remember_with_a_reused_id_reports_its_own_refusal(
    settings: Settings, store: Any, pipeline: Any, workers: Any
) -> None:
    # Another tenant's e-9, written first: never this server's answer.
    theirs = pipeline.write_now(
        {
            "namespace": "tenant-b",
            "kind": "retro",
            "heading": "Keys",
            "content": "Tenant b rotates its signing key every Monday.",
            "event_id": "e-9",
        }
    )
    workers.start(concurrency=1)
    backend = Backend(settings, Scope(("fields",)), worker="no")
    try:
        first = backend.remember(
            kind="retro",
            heading="Base image",
            content="Pin the base image to a digest, not a tag.",
            event_id="e-9",
            wait_seconds=90,
        )
        assert (first["event_id"], first["status"], first["decision"]) == (
            "e-9",
            "written",
            "inserted",
        ), first
        assert first["memory_id"] != theirs["memory_id"]
        again = backend.remember(
            kind="retro",
            heading="Deploys",
            content="Deploys run on Tuesdays after the freeze lifts.",
            event_id="e-9",
            wait_seconds=90,
        )
        # The first call sent again (an agent's retry) is a redelivery: its own row, e-9.
        retry = backend.remember(
            kind="retro",
            heading="Base image",
            content="Pin the base image to a digest, not a tag.",
            event_id="e-9",
            wait_seconds=90,
        )
    finally:
        backend.close()
    assert (again["status"], again["reason"], again["reused_id"]) == (
        "rejected",
        "event_id_reused",
        "e-9",
    ), again
    assert again["event_id"].startswith("reused-") and "memory_id" not in again
    assert (retry["event_id"], retry["decision"], retry["memory_id"]) == (
        "e-9",
        "inserted",
        first["memory_id"],
    ), retry
    row = db.query(
        store,
        "SELECT status, reason, reused_id FROM events WHERE ns_key = 'fields' AND event_id = %s",
        (again["event_id"],),
    )
    assert row == [{"status": "rejected", "reason": "event_id_reused", "reused_id": "e-9"}]
    # The original is untouched; exactly three rows: tenant b's, fields' e-9 and its reuse.
    counts = db.query(store, "SELECT ns_key, status, count(*)::int AS n FROM events GROUP BY 1, 2")
    assert {(r["ns_key"], r["status"], r["n"]) for r in counts} == {
        ("tenant-b", "written", 1),
        ("fields", "written", 1),
        ("fields", "rejected", 1),
    }

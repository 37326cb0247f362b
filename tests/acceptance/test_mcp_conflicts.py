"""MCP recall and remember show an update kept as a conflict (issue 15's memory_conflicts),
through the SDK's in-memory client against the test's PostgreSQL and Redis and a real worker.
Skipped on a store without conflicts (before issue 15's migration is merged)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client
from memsieve.mcp.backend import Backend, Scope
from memsieve.mcp.server import build_server
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from tests.support import db

OLD = "Postgres listens on port 5432."
NEW = "Postgres listens on port 5433."


def test_recall_and_remember_mark_open_conflicts(
    settings: Settings, store: Store, pipeline: Any, workers: Any
) -> None:
    if not db.query(store, "SELECT to_regclass('memory_conflicts') IS NOT NULL AS ok")[0]["ok"]:
        pytest.skip("this store keeps no conflicts yet (issue 15)")
    old = pipeline.write_now(
        {"namespace": "infra", "kind": "retro", "heading": "Database port", "content": OLD}
    )
    workers.start(concurrency=1)
    backend = Backend(settings, Scope(("infra",)), worker="no")
    out: dict[str, Any] = {}

    async def main() -> None:
        async with Client(build_server(backend)) as client:
            r = await client.call_tool(
                "remember",
                {"kind": "retro", "heading": "Database port", "content": NEW, "wait_seconds": 90},
            )
            assert not r.is_error, r.content[0].text
            out["new"] = json.loads(r.content[0].text)
            r = await client.call_tool("recall", {"query": "database port"})
            assert not r.is_error, r.content[0].text
            out["recall"] = json.loads(r.content[0].text)

    try:
        anyio.run(main)
    finally:
        backend.close()
    new = out["new"]
    assert new["decision"] == "inserted", new
    o, n = old["memory_id"], new["memory_id"]
    assert [(c["with"], c["this_is"]) for c in new["conflicts"]] == [(o, "newer")]
    hits = out["recall"]["memories"]
    assert [h["memory_id"] for h in hits] == [n, o]
    assert [[(c["with"], c["this_is"]) for c in h["conflicts"]] for h in hits] == [
        [(o, "newer")],
        [(n, "older")],
    ]

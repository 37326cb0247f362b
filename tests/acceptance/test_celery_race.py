"""Real worker processes race on the same facts through a real broker (invariants 3 and 4)."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from memsieve import constants
from memsieve.store.postgres import Store

from tests.support import db
from tests.support.workers import Workers, wait_until

FACTS = [
    "This project uses kebab-case for filenames in the src folder",
    "The staging database must be migrated before the API deploy starts",
    "Flaky login tests were caused by a shared browser profile between runs",
]


def variants(fact: str) -> list[str]:
    """Ten sends of one fact: identical, whitespace and case variants, light rewordings."""
    words = fact.split()
    return [
        fact,
        fact,
        fact + " ",
        "  " + fact,
        fact.lower(),
        fact.replace(" the ", " the  "),
        fact + ".",
        "Note: " + fact,
        fact + " (learned the hard way)",
        " ".join(words[:-1]) + " " + words[-1].upper(),
    ]


@pytest.mark.parametrize("gate_search", ["memory", "sql"])
def test_two_workers_racing_on_near_duplicates_keep_one_live_row_per_fact(
    workers: Workers, store: Store, celery_app: Any, gate_search: str
) -> None:
    events = []
    for ns in ("race-a", "race-b"):
        for f_i, fact in enumerate(FACTS):
            for v_i, text in enumerate(variants(fact)):
                events.append(
                    {
                        "event_id": f"{ns}-f{f_i}-v{v_i}",
                        "namespace": ns,
                        "kind": "pattern",
                        "heading": f"fact {f_i}",
                        "content": text,
                    }
                )
    random.Random(7).shuffle(events)
    env = {"MEMSIEVE_GATE_SEARCH": gate_search}
    workers.start(concurrency=2, extra_env=env)
    workers.start(concurrency=2, extra_env=env)

    # Eight producers, one event per message, all at once.
    def produce(chunk: list[dict[str, Any]]) -> None:
        for e in chunk:
            celery_app.send_task(constants.TASK_CAPTURE, args=[e], queue=constants.QUEUE)

    threads = [threading.Thread(target=produce, args=(events[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    def all_terminal() -> bool:
        rows = db.query(store, "SELECT count(*)::int AS n FROM events WHERE status <> 'pending'")
        return rows[0]["n"] == len(events)

    assert wait_until(all_terminal, timeout=120), workers.logs()[-4000:]
    statuses = db.query(store, "SELECT status, count(*)::int AS n FROM events GROUP BY 1")
    assert statuses == [{"status": "written", "n": len(events)}]
    live = db.query(
        store,
        "SELECT namespace, heading, count(*)::int AS n FROM memories WHERE deleted_at IS NULL"
        " GROUP BY 1, 2 ORDER BY 1, 2",
    )
    assert [(r["namespace"], r["heading"], r["n"]) for r in live] == [
        (ns, f"fact {i}", 1) for ns in ("race-a", "race-b") for i in range(len(FACTS))
    ]
    # Chains are linear: every row but the live head is superseded exactly once, no cycles,
    # and no chain crosses a namespace.
    rows = db.query(store, "SELECT id::text, supersedes::text, namespace, deleted_at FROM memories")
    by_id = {r["id"]: r for r in rows}
    for r in rows:
        if r["supersedes"]:
            assert by_id[r["supersedes"]]["namespace"] == r["namespace"]
            assert by_id[r["supersedes"]]["deleted_at"] is not None
    superseded = [r["supersedes"] for r in rows if r["supersedes"]]
    assert len(superseded) == len(set(superseded))
    dead_rows = [r for r in rows if r["deleted_at"] is not None]
    assert len(dead_rows) == len(superseded)
    # Every event maps to a memory of its own namespace.
    bad = db.query(
        store,
        "SELECT e.event_id FROM events e JOIN memories m ON m.id = e.memory_id"
        " WHERE m.namespace <> e.namespace",
    )
    assert bad == []

"""The capture stage never raises on input and records every item (no broker needed)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kombu.utils.json import dumps, loads
from memsieve.ids import event_id_for

from tests.support import db
from tests.support.strategies import raw_items


def test_accept_records_every_item_exactly_once(pipeline: Any) -> None:
    seen: set[tuple[str, str]] = set()  # ledger keys: (namespace or "", event id)

    @settings(
        max_examples=400, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(st.lists(raw_items, min_size=1, max_size=4))
    def run(items: list[Any]) -> None:
        # As the broker delivers them: through kombu's JSON.
        items = loads(dumps(items))
        accepted = pipeline.accept(items)
        ids = [event_id_for(i, pipeline.key) for i in items]
        for a, eid in zip(accepted, ids, strict=True):
            if a.reason == "event_id_reused":
                # Its key held another payload already: recorded under an id of its own.
                row = pipeline.store.get_event(a.event_id, a.namespace)
                assert (row["status"], row["reused_id"]) == ("rejected", eid)
            else:
                assert a.event_id == eid
            seen.add((a.namespace or "", a.event_id))

    run()
    rows = db.query(pipeline.store, "SELECT ns_key, event_id FROM events")
    assert {(r["ns_key"], r["event_id"]) for r in rows} == seen
    assert len(rows) == len(seen)

"""Scenario 1, the race: 4 worker processes x 2 pool processes, 8 producers, 2,000 events
(200 facts in 20 namespaces, each sent 10 times, shuffled). Exactly one live row per fact."""

from __future__ import annotations

import time
from typing import Any

import pytest
from memsieve.store.postgres import Store

from tests.support import faultkit
from tests.support.workers import Workers, wait_until

NAMESPACES = [f"race-{i:02d}" for i in range(20)]


def test_fact_variants_fall_within_the_threshold_and_facts_stay_apart() -> None:
    faultkit.check_facts(40)


@pytest.mark.slow
def test_2000_events_from_8_producers_on_4_workers_keep_one_live_row_per_fact(
    workers: Workers, store: Store, celery_app: Any
) -> None:
    events, expected = faultkit.make_events(NAMESPACES, facts_per_ns=10, sends=10)
    assert len(events) == 2000 and len(expected) == 200
    for _ in range(4):
        workers.start(concurrency=2)
    started = time.monotonic()
    accepted = faultkit.send(celery_app, events, producers=8)
    assert len(accepted) == len(events)
    assert wait_until(lambda: faultkit.terminal_count(store) == len(events), timeout=240), (
        workers.logs()[-4000:]
    )
    wall = time.monotonic() - started
    figures = faultkit.check_store(store, expected, len(events))
    # Every event's decision is recorded; identical copies merged, variants superseded.
    assert figures["inserted"] == 200
    assert figures["merged"] + figures["superseded"] == 1800
    faultkit.report(
        "1-race",
        workers=4,
        pool_processes=8,
        producers=8,
        events_lost=0,
        wall_s=round(wall, 1),
        **figures,
    )

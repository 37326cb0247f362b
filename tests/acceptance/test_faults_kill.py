"""Scenario 2, kill -9: a 5,000-event backfill while workers are SIGKILLed (main process and
pool children at once) mid-embed and mid-transaction, then restarted. Nothing is lost and
nothing is written twice."""

from __future__ import annotations

import random
import signal
import time
from typing import Any

import pytest
from memsieve.store.postgres import Store

from tests.support import faultkit
from tests.support.workers import Workers, wait_until

NAMESPACES = [f"bf-{i:02d}" for i in range(20)]
# Slow each flush round down enough that a kill lands inside it; small batches make many
# rounds; short lock TTL and visibility timeout make recovery quick.
FAULT_ENV = {
    "MEMSIEVE_BATCH_SIZE": "50",
    "MEMSIEVE_FAULT_DELAY_EMBED": "0.2",
    "MEMSIEVE_FAULT_DELAY_WRITE": "0.2",
    "MEMSIEVE_LOCK_TTL": "3",
    "MEMSIEVE_VISIBILITY_TIMEOUT": "10",
}
KILLS = 6


@pytest.mark.slow
def test_backfill_survives_repeated_kill_9_mid_embed_and_mid_transaction(
    workers: Workers, store: Store, celery_app: Any
) -> None:
    events, expected = faultkit.make_events(NAMESPACES, facts_per_ns=25, sends=10)
    assert len(events) == 5000 and len(expected) == 500
    rng = random.Random(11)
    slots = [workers.start(concurrency=2, extra_env=FAULT_ENV) for _ in range(2)]
    started = time.monotonic()
    faultkit.send(celery_app, events, producers=4, per_message=100)

    kills: list[dict[str, Any]] = []
    for k in range(KILLS):
        stage = ("embed", "write")[k % 2]
        slot = k % len(slots)
        proc = slots[slot]
        tail = faultkit.LogTail(workers.logdir / f"worker-{workers.procs.index(proc)}.log")
        tail.skip_to_end()
        m = tail.wait_for(rf"fault injection: pausing .* in {stage} .*pid (\d+)", timeout=30)
        if not m:
            break  # the backfill finished before this kill could land
        time.sleep(rng.uniform(0.0, 0.1))  # a random point inside the paused step
        in_txn = faultkit.holds_advisory_lock(store, int(m.group(1)))
        faultkit.signal_group(proc, signal.SIGKILL)
        proc.wait(timeout=10)
        done = faultkit.terminal_count(store)
        kills.append({"stage": stage, "terminal_at_kill": done, "in_transaction": in_txn})
        slots[slot] = workers.start(concurrency=2, extra_env=FAULT_ENV)
        # Let the backfill move on before the next kill, so kills land at different points.
        wait_until(lambda d=done: faultkit.terminal_count(store) >= d + 250, timeout=30)

    assert len(kills) >= 4, kills
    # Kills in the write step landed inside the victim's open transaction (it held the
    # namespace's advisory lock); kills in the embed step landed before any transaction.
    assert all(k["in_transaction"] == (k["stage"] == "write") for k in kills), kills
    assert wait_until(lambda: faultkit.terminal_count(store) == len(events), timeout=120), (
        faultkit.terminal_count(store),
        workers.logs()[-3000:],
    )
    wall = time.monotonic() - started
    figures = faultkit.check_store(store, expected, len(events))
    assert figures["inserted"] == 500
    faultkit.report(
        "2-kill-9",
        kills=len(kills),
        kill_points=kills,
        events_lost=0,
        wall_s=round(wall, 1),
        **figures,
    )

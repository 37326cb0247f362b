"""A flush delivered on a lower lane stops after its batch in hand when a higher lane has
work (issue 16: a live capture waits for one batch of a backfill, not a whole slice)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import redis
from memsieve import constants
from memsieve.flow import runtime
from memsieve.flow.pipeline import Pipeline
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from tests.support.bulk import events


def test_a_flush_stops_after_one_batch_when_asked_to_yield(
    settings: Settings, store: Store
) -> None:
    pipe = Pipeline(replace(settings, batch_size=10), store=store)
    try:
        pipe.accept(events(35))
        asked: list[int] = []

        def live_waits() -> bool:
            asked.append(1)
            return True

        first = pipe.flush("bulk", yield_to=live_waits)
        assert (len(first.outcomes), first.more, len(asked)) == (10, True, 1)
        rest = pipe.flush("bulk", yield_to=lambda: False)
        assert (len(rest.outcomes), rest.more) == (25, False)
    finally:
        pipe.redis.close()


def test_work_waiting_reads_the_higher_lanes_of_the_redis_broker(
    settings: Settings, redis_url: str, monkeypatch: Any
) -> None:
    monkeypatch.setattr(runtime, "current_settings", lambda: settings)
    monkeypatch.setattr(runtime, "_broker", None)
    assert runtime.higher_lanes(constants.QUEUE) == ()
    assert runtime.higher_lanes(constants.QUEUE_FLUSH) == (constants.QUEUE,)
    assert runtime.higher_lanes(constants.QUEUE_BACKFILL) == (
        constants.QUEUE,
        constants.QUEUE_FLUSH,
    )
    assert runtime.higher_lanes(None) == ()
    lanes = runtime.higher_lanes(constants.QUEUE_BACKFILL)
    assert not runtime.work_waiting(lanes)
    client = redis.Redis.from_url(redis_url)
    client.lpush(constants.QUEUE_FLUSH, b"{}")
    assert runtime.work_waiting(lanes)
    assert not runtime.work_waiting(runtime.higher_lanes(constants.QUEUE_FLUSH))
    monkeypatch.setattr(runtime, "current_settings", lambda: replace(settings, yield_to_live=False))
    assert not runtime.work_waiting(lanes)
    client.delete(constants.QUEUE_FLUSH)
    client.close()


def test_a_helper_embeds_ahead_longer_only_where_it_sees_the_work_it_would_delay(
    settings: Settings, monkeypatch: Any
) -> None:
    """Ten flush slices where the helper stops on any waiting message (a Redis broker), two
    where it cannot see one (AMQP, or MEMSIEVE_YIELD_TO_LIVE off) or is not asked to."""
    slice_s = settings.flush_slice_ms / 1000
    redis_broker = replace(settings, broker_url="redis://127.0.0.1:6379/0", yield_to_live=True)
    monkeypatch.setattr(runtime, "current_settings", lambda: redis_broker)
    assert runtime.helper_budget(True) == runtime.HELPER_SLICES_SEEN * slice_s == 10 * slice_s
    assert runtime.helper_budget(False) == 2 * slice_s
    for blind in (
        replace(redis_broker, broker_url="amqp://guest:guest@127.0.0.1:5672//"),
        replace(redis_broker, yield_to_live=False),
    ):
        monkeypatch.setattr(runtime, "current_settings", lambda blind=blind: blind)
        assert runtime.helper_budget(True) == runtime.HELPER_SLICES_BLIND * slice_s == 2 * slice_s

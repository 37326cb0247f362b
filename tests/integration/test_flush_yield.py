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


def test_a_broker_that_refuses_to_count_its_queues_leaves_the_helper_blind(
    settings: Settings, redis_url: str, redis_server: Any, monkeypatch: Any
) -> None:
    """A Redis broker whose ACL refuses LLEN: the asking flush stops (as if work waited),
    then for a minute the process is blind, as on AMQP: the short budget, no more asking."""
    admin = redis.Redis.from_url(redis_server.admin_url())
    admin.execute_command(
        "ACL", "SETUSER", "nollen", "on", ">pw-nollen", "~*", "&*", "+@all", "-llen"
    )
    port = redis.connection.parse_url(redis_url)["port"]
    refusing = replace(settings, broker_url=f"redis://nollen:pw-nollen@127.0.0.1:{port}/0")
    monkeypatch.setattr(runtime, "current_settings", lambda: refusing)
    monkeypatch.setattr(runtime, "_broker", None)
    monkeypatch.setattr(runtime, "_blind_until", 0.0)
    slice_s = settings.flush_slice_ms / 1000
    lanes = runtime.higher_lanes(constants.QUEUE_BACKFILL)
    assert runtime.helper_budget(True) == runtime.HELPER_SLICES_SEEN * slice_s
    try:
        assert runtime.work_waiting(lanes)  # refused: stop now
        assert not runtime.sees_queues()
        assert runtime.helper_budget(True) == runtime.HELPER_SLICES_BLIND * slice_s
        assert not runtime.work_waiting(lanes)  # blind: not asked again
        # A minute later it asks again; with LLEN allowed it sees the queues once more.
        admin.execute_command("ACL", "SETUSER", "nollen", "+llen")
        monkeypatch.setattr(runtime, "_blind_until", 0.0)
        assert not runtime.work_waiting(lanes)
        assert runtime.sees_queues()
        assert runtime.helper_budget(True) == runtime.HELPER_SLICES_SEEN * slice_s
    finally:
        admin.execute_command("ACL", "DELUSER", "nollen")
        admin.close()


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
    # Never past a third of the visibility timeout: the broker would deliver the task again.
    short = replace(redis_broker, visibility_timeout=12, flush_slice_ms=2000)
    monkeypatch.setattr(runtime, "current_settings", lambda: short)
    assert runtime.helper_budget(True) == 4.0
    for blind in (
        replace(redis_broker, broker_url="amqp://guest:guest@127.0.0.1:5672//"),
        replace(redis_broker, yield_to_live=False),
    ):
        monkeypatch.setattr(runtime, "current_settings", lambda blind=blind: blind)
        assert runtime.helper_budget(True) == runtime.HELPER_SLICES_BLIND * slice_s == 2 * slice_s


def test_a_drain_that_starts_cold_writes_a_small_first_batch(
    settings: Settings, store: Store, monkeypatch: Any
) -> None:
    """A backfill's first memories come after FIRST_BATCH events, not a full batch; while the
    namespace is being drained, every batch is full (the next flush's first one too)."""
    from memsieve.flow import pipeline as pipeline_module

    pipe = Pipeline(replace(settings, batch_size=100), store=store)
    sizes: list[int] = []
    claim = store.claim_pending

    def counted(namespace: str, limit: int, exclude: Any = ()) -> Any:
        got = claim(namespace, limit, exclude=exclude)
        sizes.append(len(got))
        return got

    monkeypatch.setattr(store, "claim_pending", counted)
    try:
        pipe.redis.delete(constants.draining_key("bulk"), constants.draining_key("other"))
        pipe.accept(events(150))
        assert len(pipe.flush("bulk").outcomes) == 150
        assert sizes == [pipeline_module.FIRST_BATCH, 100, 150 - 100 - 32, 0]
        sizes.clear()
        assert pipe.redis.exists(constants.draining_key("bulk")) == 0  # drained
        pipe.accept(events(330, namespace="other"))
        first = pipe.flush("other", yield_to=lambda: True)  # one batch, then it yields
        assert (len(first.outcomes), first.more) == (32, True)
        assert 0 < pipe.redis.ttl(constants.draining_key("other")) <= pipeline_module.DRAINING_S
        # Turns spaced out by live work go on in full batches until a flush finds nothing
        # left (the key is not a few seconds' memory of the last batch).
        second = pipe.flush("other", yield_to=lambda: True)
        assert (len(second.outcomes), second.more) == (100, True)
        assert len(pipe.flush("other").outcomes) == 198
        assert sizes == [32, 100, 100, 98, 0]
        assert pipe.redis.exists(constants.draining_key("other")) == 0
    finally:
        pipe.redis.delete(constants.draining_key("bulk"), constants.draining_key("other"))
        pipe.redis.close()


def test_a_busy_flush_helps_for_the_budget_its_stop_allows(
    pipeline: Pipeline, redis_url: str, monkeypatch: Any
) -> None:
    """Through the task body: a helper that cannot ask whether work waits (no delivery
    info: called directly, a retry of unknown lane) gets 2 slices; one delivered on the
    backfill lane, which stops when a message waits, gets 10."""
    from memsieve.tasks import flush as flush_task

    settings = replace(pipeline.settings, broker_url=redis_url, yield_to_live=True)
    monkeypatch.setattr(runtime, "current_settings", lambda: settings)
    monkeypatch.setattr(runtime, "_broker", None)
    monkeypatch.setattr(flush_task.runtime, "pipeline", lambda: pipeline)
    budgets: list[tuple[float, bool]] = []

    def helping(namespace: str, budget: float = 0.0, stop: Any = None) -> int:
        budgets.append((budget, stop is not None))
        return 0

    monkeypatch.setattr(pipeline, "embed_ahead", helping)
    client = redis.Redis.from_url(redis_url)
    pipeline.accept(events(3, namespace="held"))
    client.set(constants.lock_key("held"), "another worker", ex=30)  # the namespace is busy
    client.set(constants.flush_retry_key("held"), "1", ex=30)  # its retry is queued already
    try:
        assert flush_task.flush.run("held", None)["busy"] is True
        flush_task.flush.push_request(delivery_info={"routing_key": constants.QUEUE_BACKFILL})
        try:
            assert flush_task.flush.run("held", constants.QUEUE_BACKFILL)["busy"] is True
        finally:
            flush_task.flush.pop_request()
    finally:
        client.delete(constants.lock_key("held"), constants.flush_retry_key("held"))
        client.close()
    slice_s = settings.flush_slice_ms / 1000
    assert budgets == [(2 * slice_s, False), (10 * slice_s, True)]

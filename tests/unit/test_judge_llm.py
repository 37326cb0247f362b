"""The optional LLM judge against a real local HTTP server (tests.support.chat_server.py):
batching, the pair cache, retries on 429 / 5xx / timeouts, the shared budget, and garbage or
refused answers that keep both rows (never a supersede)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from memsieve.gate.decide import Candidate, Incoming
from memsieve.gate.judge import Judgement, Verdict
from memsieve.judge_llm import LLMConfig, LLMJudge, config_from_settings, parse_verdicts
from memsieve.settings import Settings

from tests.support.chat_server import ChatReply, FakeChat


def _pair(old: str, new: str, n: int = 0) -> tuple[Incoming, Candidate]:
    return (
        Incoming("ns", "pattern", "", new, f"h-new-{n}"),
        Candidate(f"m{n}", "pattern", "", old, f"h-old-{n}", 0.1),
    )


PAIRS = [
    _pair("Deploys run on Fridays.", "deploys run on fridays", 0),  # same (fake's rule)
    _pair("The data warehouse is Redshift.", "The data warehouse is now Snowflake.", 1),
    _pair("The auth service issues JWTs.", "The auth service locks accounts.", 2),
]


class Fallback:
    """Stands for the trained classifier: records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[Incoming, Candidate]] = []

    def __call__(self, pairs: Sequence[tuple[Incoming, Candidate]]) -> list[Judgement]:
        self.asked.extend(pairs)
        return [Judgement(Verdict.SAME, 0.7, "classifier", "fallback") for _ in pairs]


class CountingLimiter:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def acquire(self, requests: int = 1, tokens: int = 0) -> None:
        self.calls.append((requests, tokens))


@pytest.fixture
def fake() -> Iterator[FakeChat]:
    with FakeChat() as server:
        yield server


def _judge(fake: FakeChat, **kw: object) -> tuple[LLMJudge, Fallback]:
    fb = Fallback()
    judge = LLMJudge(
        LLMConfig("fake-model", fake.base_url, "sk-test"),
        fb,
        sleep=lambda s: None,
        backoff_base=0.01,
        **kw,  # type: ignore[arg-type]
    )
    return judge, fb


def test_verdicts_come_from_the_model_in_one_batched_request(fake: FakeChat) -> None:
    judge, fb = _judge(fake)
    out = judge(PAIRS)
    assert [j.verdict for j in out] == [Verdict.SAME, Verdict.UPDATE, Verdict.DIFFERENT]
    assert {j.judge for j in out} == {"llm:fake-model"}
    assert fake.requests == 1 and fake.pairs == 3
    assert fb.asked == []


def test_batches_split_at_batch_size(fake: FakeChat) -> None:
    judge, _ = _judge(fake, batch_size=2)
    judge(PAIRS)
    assert fake.requests == 2 and fake.pairs == 3


def test_pairs_are_cached(fake: FakeChat) -> None:
    judge, _ = _judge(fake)
    first = judge(PAIRS)
    again = judge(PAIRS + [PAIRS[1]])
    assert fake.requests == 1
    assert [j.verdict for j in again] == [j.verdict for j in first] + [Verdict.UPDATE]
    assert judge.stats.cache_hits == 4


def test_duplicate_pairs_in_one_batch_are_asked_once(fake: FakeChat) -> None:
    judge, _ = _judge(fake)
    out = judge([PAIRS[1], PAIRS[1], PAIRS[1]])
    assert fake.pairs == 1
    assert [j.verdict for j in out] == [Verdict.UPDATE] * 3


def test_429_is_retried_with_retry_after(fake: FakeChat) -> None:
    fake.push(ChatReply(status=429, retry_after="0.01"), times=2)
    judge, fb = _judge(fake)
    out = judge(PAIRS)
    assert fake.requests == 3
    assert judge.stats.retries == 2
    assert [j.verdict for j in out] == [Verdict.SAME, Verdict.UPDATE, Verdict.DIFFERENT]
    assert fb.asked == []


def test_5xx_then_success(fake: FakeChat) -> None:
    fake.push(ChatReply(status=503))
    judge, _ = _judge(fake)
    assert judge(PAIRS)[1].verdict == Verdict.UPDATE
    assert fake.requests == 2


def test_slow_answer_times_out_and_is_retried(fake: FakeChat) -> None:
    fake.push(ChatReply(delay=1.0))
    judge, _ = _judge(fake, timeout=0.2)
    out = judge(PAIRS)
    assert judge.stats.retries == 1
    assert out[1].verdict == Verdict.UPDATE


def test_endpoint_still_failing_falls_back_to_the_classifier(fake: FakeChat) -> None:
    fake.push(ChatReply(status=500), times=3)
    judge, fb = _judge(fake, max_attempts=3)
    out = judge(PAIRS)
    assert fake.requests == 3
    assert len(fb.asked) == 3
    assert all(j.judge == "classifier (llm:fake-model unavailable)" for j in out)
    # Nothing cached from a failure: the next batch asks again.
    judge(PAIRS)
    assert fake.requests == 4


@pytest.mark.parametrize(
    "reply",
    [
        ChatReply(content="They look the same to me!"),
        ChatReply(content='{"verdicts": "same"}'),
        ChatReply(content='{"verdicts": [{"id": 1, "verdict": "identical"}]}'),
        ChatReply(content='```json\n{"verdicts": [{"id": "1", "verdict": "same"}]}\n```'),
        ChatReply(refusal="I can't help with that."),
        ChatReply(content=""),
    ],
    ids=["prose", "not-a-list", "unknown-verdict", "string-id", "refusal", "empty"],
)
def test_garbage_or_refusal_keeps_both_rows(fake: FakeChat, reply: ChatReply) -> None:
    fake.push(reply)
    judge, fb = _judge(fake)
    out = judge(PAIRS)
    assert [j.verdict for j in out] == [Verdict.DIFFERENT] * 3
    assert all(j.judge == "llm:fake-model" and "kept both rows" in j.detail for j in out)
    assert fb.asked == []
    assert judge.stats.garbage == 3
    # A garbage answer is not cached: the next batch asks again and gets real verdicts.
    assert judge(PAIRS)[0].verdict == Verdict.SAME


def test_partial_answer_covers_only_its_pairs(fake: FakeChat) -> None:
    fake.push(ChatReply(content='{"verdicts": [{"id": 2, "verdict": "update"}]}'))
    judge, _ = _judge(fake)
    out = judge(PAIRS)
    assert [j.verdict for j in out] == [Verdict.DIFFERENT, Verdict.UPDATE, Verdict.DIFFERENT]


def test_hard_guard_vetoes_before_any_request(fake: FakeChat) -> None:
    judge, _ = _judge(fake)
    out = judge([_pair("Postgres listens on port 5432.", "Postgres listens on port 5433.")])
    assert out[0].verdict == Verdict.DIFFERENT and out[0].judge == "guards"
    assert fake.requests == 0


def test_every_request_is_inside_the_shared_budget(fake: FakeChat) -> None:
    fake.push(ChatReply(status=429, retry_after="0"))
    limiter = CountingLimiter()
    judge, _ = _judge(fake, limiter=limiter, batch_size=2)
    judge(PAIRS)
    assert fake.requests == 3  # 2 batches + 1 retry
    assert len(limiter.calls) == 3
    assert all(r == 1 and t > 0 for r, t in limiter.calls)


def test_off_unless_configured() -> None:
    assert config_from_settings(Settings.from_env({})) is None
    assert config_from_settings(Settings.from_env({"OPENAI_API_KEY": "sk-x"})) is None
    cfg = config_from_settings(
        Settings.from_env(
            {
                "MEMSIEVE_JUDGE_LLM_MODEL": "gpt-4o-mini",
                "OPENAI_API_KEY": "sk-x",
                "MEMSIEVE_JUDGE_LLM_BASE_URL": "http://127.0.0.1:9/v1",
            }
        )
    )
    assert cfg is not None and cfg.model == "gpt-4o-mini" and cfg.api_key == "sk-x"
    assert cfg.base_url == "http://127.0.0.1:9/v1"
    assert "sk-x" not in repr(cfg)


def test_default_judge_puts_the_llm_in_front_when_configured(fake: FakeChat) -> None:
    from memsieve.judge_llm import service_judge

    settings = Settings.from_env(
        {
            "MEMSIEVE_EMBEDDER": "local",
            "MEMSIEVE_JUDGE": "classifier",
            "MEMSIEVE_JUDGE_LLM_MODEL": "fake-model",
            "MEMSIEVE_JUDGE_LLM_BASE_URL": fake.base_url,
            "MEMSIEVE_JUDGE_LLM_API_KEY": "sk-test",
        }
    )
    judge = service_judge(settings)
    assert isinstance(judge, LLMJudge) and judge.name == "llm:fake-model"
    assert judge.fallback.name == "classifier"  # type: ignore[attr-defined]
    plain = Settings.from_env(
        {
            "MEMSIEVE_EMBEDDER": "local",
            "MEMSIEVE_JUDGE": "guards",
            "MEMSIEVE_JUDGE_LLM_MODEL": "m",
            "MEMSIEVE_JUDGE_LLM_API_KEY": "k",
        }
    )
    assert service_judge(plain).fallback.name == "guards"  # type: ignore[attr-defined]
    default = Settings.from_env(
        {
            "MEMSIEVE_EMBEDDER": "local",
            "MEMSIEVE_JUDGE_LLM_MODEL": "m",
            "MEMSIEVE_JUDGE_LLM_API_KEY": "k",
        }
    )
    assert service_judge(default).fallback.name == "classifier"  # type: ignore[attr-defined]
    hashing = Settings.from_env({"MEMSIEVE_EMBEDDER": "hashing", "MEMSIEVE_JUDGE_LLM_MODEL": "m"})
    assert service_judge(hashing).name == "guards"  # type: ignore[attr-defined]
    assert "sk-test" not in repr(settings)


def test_parse_verdicts_rejects_duplicates_and_out_of_range() -> None:
    raw = (
        '{"verdicts": [{"id": 1, "verdict": "same"}, {"id": 1, "verdict": "different"},'
        ' {"id": 2, "verdict": "UPDATE"}, {"id": 9, "verdict": "same"}, {"id": true,'
        ' "verdict": "same"}]}'
    )
    assert parse_verdicts(raw, 3) == {2: "update"}

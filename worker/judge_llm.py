"""An optional LLM judge over any OpenAI-compatible chat endpoint (off unless configured).

Enabled by MEMSIEVE_JUDGE_LLM_MODEL (e.g. `gpt-4o-mini`, or a local server's model name);
MEMSIEVE_JUDGE_LLM_BASE_URL (default: MEMSIEVE_OPENAI_BASE_URL) points the `openai` client at another
server; the key is MEMSIEVE_JUDGE_LLM_API_KEY or OPENAI_API_KEY (a local server may want none).

- Batched: one chat request per up to `batch_size` pairs, answered as one JSON object.
- Cached by pair: (model, live text, incoming text) -> verdict, in process, so a pair is asked
  once however often the gate meets it.
- Inside the shared rate budget: every request first acquires one request and its estimated
  tokens from the limiter it is given (the Redis budget of `memsieve.embedders.ratelimit`).
- Retries are tenacity's (429, 5xx, timeouts, connection errors), with Retry-After honoured.
- The hard guards (numbers, identifiers, dates) still veto first: no pair they stop is sent.
- A garbage, partial or refused answer gives `DIFFERENT` for the pairs it does not cover:
  keep both rows, never a supersede. An endpoint still failing after the retries gives the
  fallback judge's verdict (the trained classifier), recorded as such.
- The verdict and the model are recorded: `Judgement.judge` is `llm:<model>`.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import openai
import tenacity
from memsieve import errors
from memsieve.embedders import openai_client
from memsieve.embedders.openai import is_retryable, retry_after
from memsieve.embedders.ratelimit import RateLimiter
from memsieve.gate import guards as gguards
from memsieve.gate.decide import Candidate, Incoming, Veto
from memsieve.gate.judge_features import HARD_GUARDS

if TYPE_CHECKING:
    from memsieve.gate.decide import Judge
    from memsieve.settings import Settings


SYSTEM_PROMPT = (
    "You compare short memories written by AI coding agents. For each numbered pair, "
    "'old' is a stored memory and 'new' an incoming one. Answer for each pair exactly one of:\n"
    '"same": both state the same fact (a rewording; nothing added, removed or changed);\n'
    '"update": the same subject and slot with a new value (a changed tool, schedule, owner, '
    "limit, number, or a reversed rule), so the new one replaces the old;\n"
    '"different": different facts (another subject, another detail, a fact added).\n'
    'When unsure, answer "different". Reply with JSON only: '
    '{"verdicts": [{"id": 1, "verdict": "same"}, ...]} with one entry per pair.'
)

_VERDICTS = ("same", "update", "different")
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


@dataclass
class LLMStats:
    """Counters for the bench and metrics: HTTP attempts, pairs asked, cache hits."""

    requests: int = 0
    retries: int = 0
    pairs_sent: int = 0
    cache_hits: int = 0
    garbage: int = 0
    failures: int = 0


@dataclass(frozen=True)
class LLMConfig:
    model: str
    base_url: str | None
    api_key: str | None = field(repr=False, default=None)


def config_from_settings(settings: Settings) -> LLMConfig | None:
    """The LLM judge's configuration, or None when it is off (the default)."""
    if not settings.judge_llm_model:
        return None
    return LLMConfig(
        settings.judge_llm_model,
        settings.judge_llm_base_url,
        settings.judge_llm_api_key or None,
    )


def limiter_from_settings(settings: Settings, config: LLMConfig) -> RateLimiter | None:
    """The shared Redis budget for the chat model (MEMSIEVE_JUDGE_LLM_RPM / _TPM, per
    minute, shared by every worker), or None when no limit is set or there is no Redis."""
    rpm, tpm = settings.judge_llm_rpm, settings.judge_llm_tpm
    if not (rpm or tpm) or not settings.redis_url:
        return None
    import redis
    from memsieve.embedders.ratelimit import RedisRateLimiter

    client = redis.Redis.from_url(settings.redis_url)
    return RedisRateLimiter(client, f"judge:{config.model}", rpm=rpm, tpm=tpm)


def service_judge(settings: Settings | None = None) -> Judge:
    """The judge the service's gate uses: `memsieve.gate.judge.default_judge`, with the LLM
    judge in front of it when MEMSIEVE_JUDGE_LLM_MODEL is set."""
    from memsieve.gate.judge import default_judge

    base = default_judge(settings)
    config = config_from_settings(settings) if settings is not None else None
    if config is None or settings is None or settings.embedder == "hashing":
        return base  # no LLM configured, or the test embedder
    return LLMJudge(config, base, limiter=limiter_from_settings(settings, config))


def pair_key(model: str, live: str, incoming: str) -> str:
    h = hashlib.sha256()
    for part in (model, live, incoming):
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


class LLMJudge:
    """A Judge asking a chat model; see the module docstring."""

    def __init__(
        self,
        config: LLMConfig,
        fallback: Callable[[Sequence[tuple[Incoming, Candidate]]], list[Any]],
        *,
        limiter: RateLimiter | None = None,
        batch_size: int = 16,
        timeout: float = 20.0,
        max_attempts: int = 4,
        backoff_base: float = 0.5,
        backoff_max: float = 10.0,
        max_elapsed: float = 60.0,
        cache_size: int = 20_000,
        client: openai.OpenAI | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config
        self.name = f"llm:{config.model}"
        self.fallback = fallback
        self.limiter = limiter
        self.batch_size = max(1, batch_size)
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.max_elapsed = max_elapsed
        self.stats = LLMStats()
        self._cache: OrderedDict[str, str] = OrderedDict()
        self._cache_size = cache_size
        self._client = openai_client.PerProcess(
            config.api_key or "none", config.base_url, timeout, client=client, what="LLM judge"
        )
        self._sleep = sleep
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Load the fallback judge's model now, if it has one."""
        warm = getattr(self.fallback, "warm_up", None)
        if warm is not None:
            warm()

    # -- Judge -------------------------------------------------------------------------

    def __call__(self, pairs: Sequence[tuple[Incoming, Candidate]]) -> list[Any]:
        from memsieve.gate.decide import Judgement, Verdict

        out: list[Any] = [None] * len(pairs)
        ask: list[int] = []
        keys: list[str] = []
        for i, (inc, cand) in enumerate(pairs):
            hard = [
                v for g in gguards.default_guards() for v in g(inc, cand) if v.guard in HARD_GUARDS
            ]
            if hard:
                detail = "; ".join(f"{v.guard}: {v.detail}" for v in hard)
                out[i] = Judgement(Verdict.DIFFERENT, 0.9, "guards", detail, tuple(hard))
                continue
            key = pair_key(self.config.model, _text(cand), _text(inc))
            keys.append(key)
            with self._lock:
                cached = self._cache.get(key)
                if cached is not None:
                    self._cache.move_to_end(key)
                    self.stats.cache_hits += 1
            if cached is not None:
                out[i] = Judgement(Verdict(cached), 0.9, self.name, "cached verdict")
            else:
                ask.append(i)
        # One question per distinct pair of the batch.
        unique: dict[str, int] = {}
        for i in ask:
            unique.setdefault(
                pair_key(self.config.model, _text(pairs[i][1]), _text(pairs[i][0])), i
            )
        firsts = list(unique.values())
        answers: dict[int, tuple[str | None, str]] = {}
        for start in range(0, len(firsts), self.batch_size):
            chunk = firsts[start : start + self.batch_size]
            answers.update(self._ask(pairs, chunk))
        failed = [i for i in firsts if answers[i][0] is None and answers[i][1] == "unavailable"]
        fallback: dict[int, Any] = {}
        if failed:
            for i, j in zip(failed, self.fallback([pairs[i] for i in failed]), strict=True):
                fallback[i] = j
        for i in ask:
            key = pair_key(self.config.model, _text(pairs[i][1]), _text(pairs[i][0]))
            first = unique[key]
            verdict, why = answers[first]
            if verdict is None and first in fallback:
                j = fallback[first]
                out[i] = Judgement(
                    j.verdict, j.score, f"{j.judge} ({self.name} unavailable)", j.detail, j.vetoes
                )
            elif verdict is None:
                out[i] = Judgement(Verdict.DIFFERENT, 0.5, self.name, f"kept both rows: {why}")
            else:
                out[i] = Judgement(Verdict(verdict), 0.9, self.name, f"model said {verdict}")
        return out

    # -- internals -----------------------------------------------------------------------

    def _ask(
        self, pairs: Sequence[tuple[Incoming, Candidate]], chunk: list[int]
    ) -> dict[int, tuple[str | None, str]]:
        """Verdicts for the pairs `chunk` indexes: (verdict, "") or (None, why)."""
        items = [
            {"id": n + 1, "old": _text(pairs[i][1]), "new": _text(pairs[i][0])}
            for n, i in enumerate(chunk)
        ]
        user = json.dumps({"pairs": items}, ensure_ascii=False)
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(is_retryable),
            stop=tenacity.stop_any(
                tenacity.stop_after_attempt(self.max_attempts),
                tenacity.stop_after_delay(self.max_elapsed),
            ),
            wait=self._wait,
            sleep=self._sleep,
            before_sleep=self._count_retry,
            reraise=True,
        )
        try:
            content = retrying(self._attempt, user, len(items))
        except (openai.OpenAIError, OSError, errors.TransientError):
            # Still failing after the retries (or the budget is exhausted): the fallback
            # judge decides these pairs.
            with self._lock:
                self.stats.failures += 1
            return {i: (None, "unavailable") for i in chunk}
        verdicts = parse_verdicts(content, len(items))
        result: dict[int, tuple[str | None, str]] = {}
        with self._lock:
            for n, i in enumerate(chunk):
                v = verdicts.get(n + 1)
                if v is None:
                    self.stats.garbage += 1
                    result[i] = (None, "no usable verdict in the model's answer")
                    continue
                result[i] = (v, "")
                key = pair_key(self.config.model, _text(pairs[i][1]), _text(pairs[i][0]))
                self._cache[key] = v
                self._cache.move_to_end(key)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return result

    def _attempt(self, user: str, n: int) -> str | None:
        if self.limiter is not None:
            # ~4 characters a token, plus the answer.
            self.limiter.acquire(requests=1, tokens=(len(SYSTEM_PROMPT) + len(user)) // 4 + 12 * n)
        with self._lock:
            self.stats.requests += 1
            self.stats.pairs_sent += n
        resp = self._client.get().chat.completions.create(
            model=self.config.model,
            messages=[
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": user},
            ],
            temperature=0,
            max_tokens=16 + 16 * n,
        )
        if not resp.choices:
            return None
        choice = resp.choices[0]
        if getattr(choice.message, "refusal", None) or choice.finish_reason == "content_filter":
            return None
        return choice.message.content

    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hint = retry_after(exc)
        if hint is not None:
            return min(hint, self.backoff_max)
        return float(
            tenacity.wait_exponential_jitter(
                initial=self.backoff_base, max=self.backoff_max, jitter=self.backoff_base
            )(state)
        )

    def _count_retry(self, state: tenacity.RetryCallState) -> None:
        with self._lock:
            self.stats.retries += 1


def parse_verdicts(content: str | None, n: int) -> dict[int, str]:
    """{pair id: verdict} from the model's answer; anything unclear is left out."""
    if not content:
        return {}
    m = _JSON_OBJECT.search(content)
    if m is None:
        return {}
    try:
        obj = json.loads(m.group(0))
    except ValueError:
        return {}
    items = obj.get("verdicts") if isinstance(obj, dict) else None
    if not isinstance(items, list):
        return {}
    out: dict[int, str] = {}
    seen: set[int] = set()
    for item in items:
        if not isinstance(item, dict):
            continue
        pid, verdict = item.get("id"), item.get("verdict")
        if not isinstance(pid, int) or isinstance(pid, bool) or not 1 <= pid <= n:
            continue
        if pid in seen:  # two answers for one pair: trust neither
            out.pop(pid, None)
            continue
        seen.add(pid)
        if isinstance(verdict, str) and verdict.strip().lower() in _VERDICTS:
            out[pid] = verdict.strip().lower()
    return out


def _text(x: Incoming | Candidate) -> str:
    return gguards.memory_text(x.heading, x.content)


__all__ = ["LLMConfig", "LLMJudge", "LLMStats", "Veto", "config_from_settings", "parse_verdicts"]

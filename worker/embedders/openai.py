"""OpenAI (or any OpenAI-compatible server) embeddings, with retries owned by tenacity.

The client's own retries are off (max_retries=0): one place decides what is retried, how
long to wait, and how a final failure maps onto worker.errors, and every attempt passes
through the shared rate limiter.

Retried: timeouts, connection errors, malformed answers, 408, 409, 429 and 5xx, with exponential backoff and
jitter, or exactly the server's `retry-after-ms` / `Retry-After` when it sends one.
Never retried: 400, 401, 403, 404, 422, and a 429 whose code is `insufficient_quota`
(a billing problem that no wait will fix).
Final failures: retries exhausted -> TransientError (the events stay pending); the input's
fault (400/413/422) -> batching.InputRejected with the index when the API names it;
everything else -> batching.EmbedderRefused.
"""

from __future__ import annotations

import email.utils
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import openai
import tenacity
import tenacity.stop
from memsieve import errors
from memsieve.embedders import openai_client, tokens, wire
from memsieve.embedders.base import Vector
from memsieve.embedders.batching import EmbedderRefused, InputRejected
from memsieve.embedders.ratelimit import RateLimiter

# Limits of the /v1/embeddings endpoint (all current OpenAI embedding models).
MAX_INPUTS = 2048
MAX_REQUEST_TOKENS = 300_000
MAX_INPUT_TOKENS = 8192

_RETRY_STATUSES = frozenset({408, 409, 429})
_INPUT_STATUSES = frozenset({400, 413, 422})
_REFUSED_REASONS = {401: "unauthorized", 403: "forbidden", 404: "model_not_found"}
# The API names a bad input as param "input[3]", "input.3" or "$.input[3]".
_PARAM_INDEX = re.compile(r"input\D{0,2}(\d+)")


@dataclass
class EmbedStats:
    """Counters for metrics and the bench. `requests` counts HTTP attempts."""

    requests: int = 0
    retries: int = 0
    inputs: int = 0
    tokens: int = 0


def _status(exc: BaseException) -> int | None:
    return exc.status_code if isinstance(exc, openai.APIStatusError) else None


def _is_quota(exc: BaseException) -> bool:
    return isinstance(exc, openai.RateLimitError) and exc.code == "insufficient_quota"


def is_retryable(exc: BaseException) -> bool:
    """The retry rule, in one place (see module docstring)."""
    if isinstance(exc, (openai.APIConnectionError, wire.MalformedAnswer)):
        # Timeouts included; a garbled answer (a proxy cut it short) is worth another try.
        return True
    status = _status(exc)
    if status is None or _is_quota(exc):
        return False
    return status in _RETRY_STATUSES or status >= 500


def retry_after(exc: BaseException | None) -> float | None:
    """Seconds the server asked us to wait (retry-after-ms, then Retry-After), or None."""
    if not isinstance(exc, openai.APIStatusError):
        return None
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
    date = headers.get("retry-after")
    if date:
        try:
            return max(0.0, email.utils.parsedate_to_datetime(date).timestamp() - time.time())
        except (TypeError, ValueError):
            return None
    return None


class OpenAIEmbedder:
    """An Embedder (worker.embedders.base) over /v1/embeddings; also batching.TokenLimited."""

    # Starting point for text-embedding-3-small only (DESIGN: "What the seeds teach").
    default_threshold = 0.08
    max_batch = MAX_INPUTS
    max_input_tokens = MAX_INPUT_TOKENS

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        dims: int = 1536,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_attempts: int = 6,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        max_retry_after: float = 60.0,
        max_elapsed: float = 120.0,
        limiter: RateLimiter | None = None,
        client: openai.OpenAI | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if dims < 1 or max_attempts < 1:
            raise errors.ConfigError("dims and max_attempts must be >= 1")
        if client is None and not api_key:
            # Fail at start-up, not at the first flush (the client is built lazily).
            raise errors.ConfigError("the openai embedder needs OPENAI_API_KEY")
        self.model = model
        self.dims = dims
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.max_retry_after = max_retry_after
        self.max_elapsed = max_elapsed
        self.limiter = limiter
        self.stats = EmbedStats()
        self.max_request_tokens = MAX_REQUEST_TOKENS
        limiter_cap = getattr(limiter, "max_request_tokens", None)
        if isinstance(limiter_cap, int):
            # One request larger than the token bucket would break the budget's guarantee.
            self.max_request_tokens = min(MAX_REQUEST_TOKENS, limiter_cap)
        self._client = openai_client.PerProcess(
            api_key, base_url, timeout, client=client, what="OpenAI embedder"
        )
        self._sleep = sleep
        self._lock = threading.Lock()
        # Only text-embedding-3 and later accept `dimensions`; ada-002 refuses it.
        self._send_dims = not model.startswith("text-embedding-ada")

    # -- Embedder --------------------------------------------------------------------

    def count_tokens(self, text: str) -> int:
        return tokens.count_tokens(text)

    def warm_up(self) -> None:
        """Load the token encoding and build this process's client now (a worker process
        calls this at start): ~0.25 s that each process's first flush paid, a live lesson's
        included (0.7-1.3 s on a loaded machine)."""
        tokens.encoding()
        self._client.get()

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One float32 vector (a row of one numpy matrix) per text.

        Raises TransientError, InputRejected(index), EmbedderRefused."""
        texts = list(texts)
        if not texts:
            return []
        if len(texts) > self.max_batch:
            raise ValueError(f"at most {self.max_batch} texts per call, got {len(texts)}")
        counts = tokens.count_many(texts)
        for i, (text, n) in enumerate(zip(texts, counts, strict=True)):
            # Refused here, for free: the API would answer 400 after a round trip.
            if not text:
                raise InputRejected("input is empty", index=i)
            if n > self.max_input_tokens:
                raise InputRejected(f"input is over {self.max_input_tokens} tokens", index=i)
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(is_retryable),
            stop=tenacity.stop_any(
                tenacity.stop_after_attempt(self.max_attempts),
                tenacity.stop_after_delay(self.max_elapsed),
                _StopOnLongRetryAfter(self.max_retry_after),
            ),
            wait=self._wait,
            sleep=self._sleep,
            before_sleep=self._count_retry,
            reraise=True,
        )
        try:
            return retrying(self._attempt, texts, sum(counts))
        except openai.APIStatusError as exc:
            raise self._final_error(exc, len(texts)) from exc
        except openai.APIConnectionError as exc:
            raise errors.TransientError(
                f"embeddings API unreachable after retries: {exc.message}"
            ) from exc
        except openai.OpenAIError as exc:  # e.g. a response that fails validation
            raise errors.TransientError(f"embeddings API failed: {exc}") from exc

    # -- internals ---------------------------------------------------------------------

    def _attempt(self, texts: list[str], n_tokens: int) -> list[Vector]:
        if self.limiter is not None:
            self.limiter.acquire(requests=1, tokens=n_tokens)
        with self._lock:
            self.stats.requests += 1
            self.stats.inputs += len(texts)
            self.stats.tokens += n_tokens
        # The raw body, not the client's pydantic models: base64 asked for and decoded in
        # numpy, and a server that answers floats anyway parsed without pydantic
        # (memsieve.embedders.wire).
        raw = self._client.get().embeddings.with_raw_response.create(
            input=texts,
            model=self.model,
            dimensions=self.dims if self._send_dims else openai.omit,
            encoding_format="base64",
        )
        matrix = wire.decode(raw.content, len(texts), self.dims, self.model)
        return list(matrix)

    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hint = retry_after(exc)
        if hint is not None:
            return hint
        # Exponential backoff with full-range jitter on top of a deterministic floor.
        return tenacity.wait_exponential_jitter(
            initial=self.backoff_base, max=self.backoff_max, jitter=self.backoff_base
        )(state)

    def _count_retry(self, state: tenacity.RetryCallState) -> None:
        with self._lock:
            self.stats.retries += 1

    def _final_error(self, exc: openai.APIStatusError, n: int) -> errors.MemsieveError:
        status = exc.status_code
        detail = f"HTTP {status}" + (f" {exc.code}" if exc.code else "")
        # The API's message can quote the input; keep it short in logs and dead letters.
        message = f"embeddings API refused the request: {detail}: {exc.message[:200]}"
        if is_retryable(exc):
            return errors.TransientError(
                f"embeddings API still failing after retries: {detail}",
                retry_after=retry_after(exc),
            )
        if status in _INPUT_STATUSES:
            return InputRejected(message, index=_bad_index(exc, n))
        if _is_quota(exc):
            return EmbedderRefused(message, reason="insufficient_quota")
        return EmbedderRefused(message, reason=_REFUSED_REASONS.get(status, f"http_{status}"))


class _StopOnLongRetryAfter(tenacity.stop.stop_base):
    """Stop when the server asks for more rest than `limit` seconds.

    Sleeping for minutes inside a task holds a worker slot (and maybe a namespace lock);
    giving up with TransientError.retry_after lets the pipeline reschedule instead.
    """

    def __init__(self, limit: float) -> None:
        self.limit = limit

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        outcome = retry_state.outcome
        hint = retry_after(outcome.exception() if outcome else None)
        return hint is not None and hint > self.limit


def _bad_index(exc: openai.APIStatusError, n: int) -> int | None:
    if n == 1:
        return 0
    match = _PARAM_INDEX.search(exc.param or "")
    if match and int(match.group(1)) < n:
        return int(match.group(1))
    return None

"""A requests + tokens per minute budget, shared by every worker through Redis.

Two token buckets per model (requests, tokens), checked and debited together by one Lua
script, so that no two workers can both spend the last of a budget. The script reads the
clock from Redis TIME: worker clocks never have to agree.

Why the buckets are shaped this way: a plain bucket of capacity L refilled at L per minute
admits up to 2L within one minute (a full bucket, then a minute of refill). Here the
capacity is B = burst * L and the refill rate (L - B) per period, so any window of one
period admits at most B + (L - B) = L: the budget is never exceeded, at the cost of
sustaining (1 - burst) of it. OpenAI also enforces its limits over sub-minute slices, so a
small burst avoids 429s that a full-minute burst would cause.

A single acquisition larger than the bucket (tokens > B) is admitted when the bucket is
full and leaves it in debt, so it cannot wait forever; callers keep requests within
`max_request_tokens` to keep the strict guarantee (OpenAIEmbedder does).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import redis
from memsieve import errors

# {model} is a Redis Cluster hash tag: both buckets of a model live in one slot, as the
# script that touches both requires.
KEY_FORMAT = "memsieve:embed:ratelimit:{{{model}}}:{kind}"

# KEYS: buckets. ARGV: per bucket, (capacity, refill per ms, amount).
# Returns {wait_ms, now_ms} as strings (Lua numbers would be truncated to integers).
_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local levels = {}
local wait = 0
for i = 1, #KEYS do
  local cap = tonumber(ARGV[3 * i - 2])
  local rate = tonumber(ARGV[3 * i - 1])
  local amount = tonumber(ARGV[3 * i])
  local state = redis.call('HMGET', KEYS[i], 'level', 'ts')
  local level = tonumber(state[1])
  local ts = tonumber(state[2])
  if level == nil or ts == nil then
    level = cap
    ts = now
  end
  level = math.min(cap, level + math.max(0, now - ts) * rate)
  levels[i] = level
  local need = math.min(amount, cap)
  if level < need then
    wait = math.max(wait, (need - level) / rate)
  end
end
if wait > 0 then
  return {tostring(wait), tostring(now)}
end
for i = 1, #KEYS do
  local cap = tonumber(ARGV[3 * i - 2])
  local rate = tonumber(ARGV[3 * i - 1])
  local level = levels[i] - tonumber(ARGV[3 * i])
  redis.call('HSET', KEYS[i], 'level', tostring(level), 'ts', tostring(now))
  -- Once refilled the bucket is indistinguishable from a missing key: let it expire.
  redis.call('PEXPIRE', KEYS[i], math.ceil((cap - level) / rate) + 1000)
end
return {'0', tostring(now)}
"""


class RateLimiter(Protocol):
    """What an embedder needs: block until the budget allows a request."""

    def acquire(self, requests: int = 1, tokens: int = 0) -> Any: ...


@dataclass(frozen=True)
class Grant:
    """One decision of the shared budget. `at` is Redis server time, in seconds."""

    granted: bool
    wait: float
    at: float


@dataclass(frozen=True)
class _Bucket:
    key: str
    capacity: float
    rate_per_ms: float


class RedisRateLimiter:
    """Requests and tokens per `period` seconds for one model, shared through Redis."""

    def __init__(
        self,
        client: redis.Redis,
        model: str,
        *,
        rpm: int,
        tpm: int,
        period: float = 60.0,
        burst: float = 0.1,
        max_wait: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if rpm < 0 or tpm < 0:
            raise errors.ConfigError("rate limits must be >= 0 (0 = unlimited)")
        if not 0.0 < burst < 1.0:
            raise errors.ConfigError(f"burst must be within (0, 1), got {burst}")
        if period <= 0:
            raise errors.ConfigError(f"period must be > 0, got {period}")
        self.model = model
        self.rpm, self.tpm = rpm, tpm
        self.max_wait = max_wait
        self._sleep = sleep
        self._buckets: list[_Bucket] = []
        for kind, limit in (("requests", rpm), ("tokens", tpm)):
            if limit:
                self._buckets.append(
                    _Bucket(
                        KEY_FORMAT.format(model=model, kind=kind),
                        limit * burst,
                        limit * (1.0 - burst) / (period * 1000.0),
                    )
                )
        self._script = client.register_script(_LUA)

    @property
    def max_request_tokens(self) -> int | None:
        """The largest request that keeps the strict per-period guarantee (None: no limit)."""
        for b in self._buckets:
            if b.key.endswith(":tokens"):
                return max(1, int(b.capacity))
        return None

    def try_acquire(self, requests: int = 1, tokens: int = 0) -> Grant:
        """Debit both budgets if both allow it now; else say how long to wait. Never blocks."""
        if not self._buckets:
            return Grant(True, 0.0, time.time())
        keys, argv = [], []
        for b in self._buckets:
            amount = requests if b.key.endswith(":requests") else tokens
            keys.append(b.key)
            argv += [repr(b.capacity), repr(b.rate_per_ms), str(amount)]
        try:
            wait_ms, now_ms = self._script(keys=keys, args=argv)
        except redis.RedisError as exc:
            raise errors.TransientError(f"rate limiter unavailable: {exc}") from exc
        wait = float(wait_ms) / 1000.0
        return Grant(wait == 0.0, wait, float(now_ms) / 1000.0)

    def acquire(self, requests: int = 1, tokens: int = 0) -> Grant:
        """Block until the budget allows `requests` and `tokens`; at most `max_wait` seconds.

        Raises TransientError (with retry_after) rather than wait longer: a Celery task
        should give its slot back, not sleep for minutes holding a namespace lock.
        """
        waited = 0.0
        while True:
            grant = self.try_acquire(requests, tokens)
            if grant.granted:
                return grant
            if waited + grant.wait > self.max_wait:
                raise errors.TransientError(
                    f"embedding budget for {self.model} exhausted for {grant.wait:.1f}s",
                    retry_after=grant.wait,
                )
            # Jitter spreads workers that were refused together, so they do not all retry
            # in the same millisecond and refuse each other again.
            pause = grant.wait * (1.0 + 0.1 * random.random())
            self._sleep(pause)
            waited += pause

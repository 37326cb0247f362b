"""Scrub the broker's append-only file once refused messages are consumed.

The Redis broker's AOF keeps every command ever applied until it is rewritten: the
LPUSH of a message holding a secret stays on disk after the worker refused and acked it.
The capture stage counts refusals (`note_refusals`); the sweeper's leader calls
`Scrubber.tick()` every sweep interval and, once the count has been still for one
interval (the refused messages are acked by then), asks the broker for BGREWRITEAOF.
The rewrite writes the current data set only, so consumed messages leave the file.
The application's Redis user may run BGREWRITEAOF (it writes nowhere else); a broker
that refuses (another ACL, RabbitMQ) is left alone, with one warning.
"""

from __future__ import annotations

import logging

import redis
from memsieve import constants

log = logging.getLogger("memsieve.scrub")

MAX_WAIT_TICKS = 5  # under steady refusals, rewrite anyway after this many sweeps


def note_refusals(client: redis.Redis, n: int) -> None:
    """Count `n` refused messages (never raises: bookkeeping must not fail a capture)."""
    if n:
        try:
            client.incrby(constants.REFUSALS_KEY, n)
        except redis.RedisError as exc:
            log.warning("could not count refusals: %s", type(exc).__name__)


class Scrubber:
    def __init__(self, counter: redis.Redis, broker: redis.Redis | None) -> None:
        self.counter = counter
        self.broker = broker
        self.seen: bytes | None = None
        self.waited = 0
        self.refused_by_broker = False

    def tick(self) -> bool:
        """One sweep: True if a rewrite was started."""
        if self.broker is None or self.refused_by_broker:
            return False
        count, done = self.counter.mget(constants.REFUSALS_KEY, constants.SCRUBBED_KEY)
        if count is None or count == done:
            self.seen, self.waited = count, 0
            return False
        self.waited += 1
        if count != self.seen and self.waited < MAX_WAIT_TICKS:
            self.seen = count
            return False
        try:
            self.broker.bgrewriteaof()
        except redis.ResponseError as exc:
            if "NOPERM" in str(exc) or "unknown command" in str(exc).lower():
                self.refused_by_broker = True
                log.warning("broker refuses BGREWRITEAOF; consumed messages stay in its AOF")
            return False  # "already in progress": next sweep
        self.counter.set(constants.SCRUBBED_KEY, count)
        self.seen, self.waited = count, 0
        log.info("broker append-only file rewritten after refused messages")
        return True


def for_settings(counter: redis.Redis, broker_url: str | None) -> Scrubber:
    broker = None
    if broker_url and broker_url.startswith(("redis://", "rediss://", "unix://")):
        broker = redis.Redis.from_url(broker_url, socket_timeout=10)
    return Scrubber(counter, broker)

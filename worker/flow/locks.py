"""The Redis namespace lock: serialises work per namespace across workers and machines.

It is an efficiency measure, not the correctness guarantee: redis-py lock tokens are not
fencing tokens, so a worker paused past the TTL may still run its transaction. The
`pg_advisory_xact_lock` taken inside the write transaction is what keeps the gate correct.
"""

from __future__ import annotations

import logging
import threading
import time

import redis
from memsieve.constants import lock_key
from redis.exceptions import LockError, LockNotOwnedError

log = logging.getLogger("memsieve.locks")


class NamespaceLock:
    """A short-TTL lock renewed by a background thread while the work runs."""

    def __init__(self, client: redis.Redis, namespace: str, ttl: float = 10.0) -> None:
        self.namespace = namespace
        self.ttl = ttl
        self._lock = client.lock(lock_key(namespace), timeout=ttl, thread_local=False)
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self.lost = False
        self.waited = 0.0

    def acquire(self, wait: float = 0.0) -> bool:
        started = time.monotonic()
        got = bool(self._lock.acquire(blocking=wait > 0, blocking_timeout=wait or None))
        self.waited = time.monotonic() - started
        if got:
            self._stop.clear()
            self._renewer = threading.Thread(
                target=self._renew, name=f"lock-renew-{self.namespace}", daemon=True
            )
            self._renewer.start()
        return got

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                self._lock.extend(self.ttl, replace_ttl=True)
            except (LockError, LockNotOwnedError):
                self.lost = True
                log.warning(
                    "lock for namespace %s was lost (expired); the advisory lock still guards writes",
                    self.namespace,
                )
                return
            except redis.RedisError as exc:
                log.warning("could not renew lock for namespace %s: %s", self.namespace, exc)

    def release(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=1)
            self._renewer = None
        try:
            self._lock.release()
        except (LockError, LockNotOwnedError):
            # Expired under us and maybe taken by another worker: not ours to release.
            self.lost = True
        except redis.RedisError as exc:
            log.warning("could not release lock for namespace %s: %s", self.namespace, exc)

    def __enter__(self) -> NamespaceLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

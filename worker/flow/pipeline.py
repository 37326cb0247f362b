"""filter -> embed -> lock -> gate -> write: the pipeline that the Celery tasks call.

`accept` is the capture stage (memsieve.flow.accept: validate + policy + durable inbox);
`flush` drains a namespace's pending events under its Redis lock, batch by batch, each
batch through memsieve.flow.write (targets, embeddings, the gate, one transaction under
the namespace's advisory lock).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import redis
from memsieve import constants, embedders, errors, metrics
from memsieve.capture import policy
from memsieve.flow import ahead
from memsieve.flow.accept import Accepted, CaptureStage, Key, key_of
from memsieve.flow.locks import NamespaceLock
from memsieve.flow.write import FlushResult, WriteStage
from memsieve.gate import guards, thresholds
from memsieve.settings import Settings
from memsieve.store.dberrors import StoreRefused
from memsieve.store.postgres import Pending, Store

__all__ = ["Accepted", "FlushResult", "Key", "Pipeline", "key_of"]

log = logging.getLogger("memsieve.pipeline")

# A drain that starts cold claims at most FIRST_BATCH events first: a backfill's first
# memories are written in well under a second, where a full batch of the local model takes
# seconds to embed. The batches after it are full, and so are the first batches of the
# drain's later flushes (however far apart live work spaces them): a namespace is draining
# from its first batch until a flush finds nothing left to claim (a Redis key; DRAINING_S
# bounds it should that flush never come).
FIRST_BATCH = 32
DRAINING_S = 600


class Pipeline(CaptureStage, WriteStage):
    def __init__(
        self,
        settings: Settings,
        store: Store | None = None,
        redis_client: redis.Redis | None = None,
        embedder: embedders.Embedder | None = None,
    ) -> None:
        self.settings = settings
        assert settings.database_url and settings.redis_url, "call Settings.resolved() first"
        self.store = store or Store(
            settings.database_url,
            gate_search=settings.gate_search,
            cache_mb=settings.gate_cache_mb,
        )
        self.redis = redis_client or redis.Redis.from_url(
            settings.redis_url,
            socket_timeout=10,
            socket_connect_timeout=5,
            health_check_interval=30,
            retry_on_timeout=True,
        )
        self._embedder = embedder
        self.policy = settings.policy or policy.PolicyConfig.load(settings.policy_file, {})
        from memsieve.ops import home

        self.key = home.install_key(settings.key_path)
        self.guards = tuple(guards.default_guards())
        if settings.judge_llm_model:
            from memsieve import judge_llm

            self.judge = judge_llm.service_judge(settings)
        else:
            # No LLM judge: no `openai` import either (0.4 s of `memsieve write`).
            from memsieve.gate.judge import default_judge

            self.judge = default_judge(settings)
        self.token_encoder = _share_tokens(self.judge, self.redis, settings.judge_share_ttl_s)
        self._bound = False

    @property
    def embedder(self) -> embedders.Embedder:
        if self._embedder is None:
            self._embedder = embedders.from_settings(self.settings, redis_client=self.redis)
        return self._embedder

    def ensure_bound(self) -> None:
        """Refuse to run with an embedder that does not match the store's vectors."""
        if not self._bound:
            self.store.bind_embedder(self.embedder.model, self.embedder.dims)
            self._bound = True

    def threshold_for(self, kind: str) -> float:
        # MEMSIEVE_THRESHOLD_<KIND> beats MEMSIEVE_THRESHOLD beats the measured table.
        return thresholds.threshold_for(self.embedder.model, kind, self.settings)

    # -- stages 2-4: embed, lock, gate, write -------------------------------------------
    def flush(
        self,
        namespace: str,
        wait: float = 0.0,
        budget: float | None = None,
        yield_to: Callable[[], bool] | None = None,
    ) -> FlushResult:
        """Drain pending events of one namespace. Returns busy=True if another worker holds it.

        With a `budget` (seconds), stop claiming new batches once it is spent and return
        more=True: the caller re-queues the rest, so other work gets its turn. `yield_to`,
        asked after each batch, ends the flush the same way when it answers True (live
        work is waiting).
        """
        self.ensure_bound()
        result = FlushResult(namespace)
        lock = NamespaceLock(self.redis, namespace, ttl=self.settings.lock_ttl)
        waited = time.monotonic()
        acquired = lock.acquire(wait=wait)
        metrics.lock_waited(time.monotonic() - waited, acquired)
        if not acquired:
            result.busy = True
            return result
        try:
            # Stop draining once the lock is lost (we were paused past its TTL): another
            # worker owns the namespace now. Correctness never depended on the lock (the
            # advisory lock and the pending re-check in write_batch guard each write).
            started = time.monotonic()
            batches = 0
            first = self._first_batch(namespace)
            while not lock.lost:
                if budget is not None and time.monotonic() - started >= budget:
                    result.more = True
                    break
                # After one batch at least, so that every flush makes progress.
                if batches and yield_to is not None and yield_to():
                    result.more = True
                    break
                batches += 1
                size = first if batches == 1 else self.settings.batch_size
                try:
                    pending = self.store.claim_pending(namespace, size, exclude=result.failed)
                except StoreRefused as exc:
                    buried = self.store.bury_unloadable(namespace) if exc.data_error else []
                    if not buried:
                        raise
                    result.dead.extend(buried)
                    metrics.died(buried)
                    continue
                if not pending:
                    self._drained(namespace)
                    break
                pending = self._bury_crashers(namespace, pending, result)
                # An event that failed before, or whose flushes died with it twice, is
                # retried alone: a poison event must not keep failing (and using up the
                # attempts of) the events batched with it. One crash is usually not the
                # event's fault (a deploy, the OOM killer): the batch is retried whole.
                alone = self._alone_after
                for p in [p for p in pending if p.attempts > 0 or p.claims >= alone]:
                    try:
                        self._claimed(namespace, [p], result)
                    except errors.TransientError as exc:
                        if p.event_id not in result.dead:
                            result.failed.append(p.event_id)
                        log.warning("event %s failed again (%s); retried later", p.event_id, exc)
                fresh = [p for p in pending if p.attempts == 0 and p.claims < alone]
                if fresh:
                    self._claimed(namespace, fresh, result)
                self._mark_draining(namespace)
        finally:
            lock.release()
            result.lock_lost = lock.lost
        return result

    def _first_batch(self, namespace: str) -> int:
        """The size of this flush's first claim: FIRST_BATCH when the drain starts cold."""
        try:
            draining = bool(self.redis.exists(constants.draining_key(namespace)))
        except redis.RedisError:
            draining = True  # unknown: a full batch, as before
        size = self.settings.batch_size
        return size if draining else min(size, FIRST_BATCH)

    def _mark_draining(self, namespace: str) -> None:
        try:
            self.redis.set(constants.draining_key(namespace), "1", ex=DRAINING_S)
        except redis.RedisError:
            pass  # the next flush starts with a small batch: slower by one batch, not wrong

    def _drained(self, namespace: str) -> None:
        try:
            self.redis.delete(constants.draining_key(namespace))
        except redis.RedisError:
            pass  # the next drain starts with a full batch, as before

    @property
    def _alone_after(self) -> int:
        """Unfinished claims after which an event is retried on its own: 2, so that its
        batch-mates (claimed at most twice with it) stay below MEMSIEVE_MAX_ATTEMPTS."""
        return max(1, min(2, self.settings.max_attempts - 1))

    def _bury_crashers(
        self, namespace: str, pending: list[Pending], result: FlushResult
    ) -> list[Pending]:
        """Events whose flushes died with them MEMSIEVE_MAX_ATTEMPTS times go dead."""
        keep = []
        for p in pending:
            if p.claims < self.settings.max_attempts:
                keep.append(p)
                continue
            detail = (
                f"taken {p.claims} times by flushes that never finished: a worker process "
                "died while handling it"
            )
            self._bury(namespace, p, "worker_lost", detail, result)
        return keep

    def _claimed(self, namespace: str, pending: list[Pending], result: FlushResult) -> None:
        """Process a batch with its claim recorded until the batch ends in an orderly way
        (a process killed meanwhile leaves the claim behind, which is how a crash is seen)."""
        ids = [p.event_id for p in pending]
        self.store.set_claimed(namespace, ids, True)
        try:
            self._process(namespace, pending, result)
        finally:
            try:
                self.store.set_claimed(namespace, ids, False)
            except errors.MemsieveError as exc:  # the store is down: the original error says why
                log.warning(
                    "could not clear the claim on %d events: %s", len(ids), type(exc).__name__
                )

    def embed_ahead(
        self, namespace: str, budget: float = 0.0, stop: Callable[[], bool] | None = None
    ) -> int:
        """While another worker drains `namespace`: embed what its next batches will claim
        into the embedding cache (memsieve.flow.ahead). Returns how many texts are ready."""
        return ahead.embed_ahead(self, namespace, budget, stop)

    # -- synchronous write (no queue) ------------------------------------------------------
    def write_now(self, raw: Any) -> dict[str, Any]:
        """Accept one event and write it through the gate at once; returns its outcome."""
        accepted = self.accept([raw])[0]
        if accepted.status == "pending" or (accepted.status == "duplicate" and accepted.namespace):
            assert accepted.namespace is not None
            self.flush(accepted.namespace, wait=30.0)
        row = self.store.get_event(accepted.event_id, accepted.namespace) or {}
        out = {
            "event_id": accepted.event_id,
            "decision": row.get("decision") or row.get("status"),
            "memory_id": str(row["memory_id"]) if row.get("memory_id") else None,
            "supersedes": str(row["supersedes"]) if row.get("supersedes") else None,
            "distance": row.get("distance"),
            "reason": row.get("reason"),
        }
        if row.get("detail") and row.get("status") != "written":
            out["detail"] = row["detail"]  # why it was refused, as `memsieve events` says
        return out


def _share_tokens(judge: Any, client: redis.Redis, ttl_s: int) -> Any:
    """Give the classifier judge's MiniLM encoder (behind an LLM judge too) the Redis share
    of token vectors (memsieve.embedders.token_share), unless MEMSIEVE_JUDGE_SHARE_TTL_S=0;
    that encoder, or None. It is one per process: every pipeline of the process shares
    through it."""
    encoder = getattr(getattr(judge, "fallback", judge), "encoder", None)
    if ttl_s <= 0 or encoder is None or not hasattr(encoder, "share"):
        return None
    from memsieve.embedders import local, token_share

    encoder.share = token_share.RedisTokenShare(client, local.MODEL_NAME, ttl_s)
    return encoder

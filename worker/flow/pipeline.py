"""filter -> embed -> lock -> gate -> write, through the pieces in this package.

`accept` is the capture stage (validate + policy + durable inbox); `flush` drains a
namespace's pending events: embed in batches (cached), then one transaction per batch
under the namespace's Redis lock and advisory lock.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis
from memsieve import embedders, errors, ids, metrics
from memsieve.capture import policy, secrets
from memsieve.embedders import batching
from memsieve.flow import embed
from memsieve.flow.locks import NamespaceLock
from memsieve.gate import guards, thresholds
from memsieve.ops import scrub
from memsieve.schemas import events as ev
from memsieve.schemas import memory
from memsieve.settings import Settings
from memsieve.store.dberrors import StoreRefused
from memsieve.store.postgres import InboxEvent, Outcome, Pending, Store

log = logging.getLogger("memsieve.pipeline")
# Refusals whose message holds only a lesson the policy did not want (no secret found).
_HARMLESS = frozenset(policy.REASONS) - {"secret"}
decisions_log = logging.getLogger("memsieve.decision")


# A ledger row's key: (namespace or "", event id) (migration 081).
Key = tuple[str, str]


def key_of(row: InboxEvent) -> Key:
    return (row.namespace or "", row.event_id)


@dataclass
class Accepted:
    event_id: str
    namespace: str | None
    status: str  # pending | rejected | duplicate
    reason: str | None = None
    detail: str | None = None


@dataclass
class FlushResult:
    namespace: str
    busy: bool = False
    outcomes: list[Outcome] = field(default_factory=list)
    dead: list[str] = field(default_factory=list)
    # Events that failed this round and stay pending (retried later, with backoff).
    failed: list[str] = field(default_factory=list)
    lock_lost: bool = False
    # The time budget ran out before the inbox was empty: flush again (later).
    more: bool = False
    # Refused at flush time (a `supersedes` naming no memory of the namespace).
    refused: list[str] = field(default_factory=list)
    # Left pending for the next round of this flush (see Pipeline._resolve_targets).
    deferred: list[str] = field(default_factory=list)


class Pipeline:
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

    # -- stage 1: capture -------------------------------------------------------------
    def parse(self, raw: Any) -> tuple[InboxEvent, ev.CaptureEvent | None]:
        """Turn one raw item into an inbox row: pending, or rejected with a reason.

        Never raises on input. A refused item keeps no text that could hold a secret:
        invalid events keep only their id and the validation message; events refused for
        a secret keep the redacted text and a fingerprint.
        """
        obj, event, err = ids.parse(raw)
        if event is None:
            assert err is not None
            eid = ids.invalid_item_id(raw, obj, self.key)
            # A validation message may name a field the producer made up: never keep one
            # that reads as a secret.
            detail = secrets.redact(err[1])
            row = self._refused(eid, ids.given_namespace(obj), err[0], detail)
            # Keyed: the raw bytes of a short refused item would be guessable from a plain hash.
            row.payload_hash = secrets.keyed_id(self.key, ids.raw_bytes(raw))
            return row, None
        verdict = policy.evaluate(event, self.policy, self.key)
        eid = ids.ledger_id(event, obj, self.key, verdict)
        row = InboxEvent(
            event_id=eid,
            namespace=event.namespace,
            kind=event.kind.value,
            heading=event.heading,
            content=event.content,
            payload_hash=ids.payload_hash(event),
            tags=list(event.tags),
            occurred_at=event.occurred_at,
            agent=event.source.agent,
            session=event.source.session,
            target_memory=event.supersedes,
        )
        if not verdict.admitted:
            row.status, row.reason, row.detail = "rejected", verdict.reason, verdict.detail
            if verdict.reason == "secret":
                row.heading = verdict.redacted_heading
                row.content = verdict.redacted_content
                row.payload_hash = verdict.fingerprint or row.payload_hash
                row.tags = []
                row.agent = row.session = row.target_memory = None
                if "namespace" in verdict.secret_fields:
                    row.namespace = None
            return row, None
        return row, event

    @staticmethod
    def _reuse(row: InboxEvent, stored_hash: str) -> InboxEvent:
        """The row of a payload whose event id was already used for another payload.

        Recorded, never dropped: under an id derived from the reused id and this payload's
        hash (so a redelivery of it is a duplicate), refused with both hashes in the
        detail and the reused id in `reused_id`. It keeps no text.
        """
        eid = ids.reused_event_id(row.event_id, row.payload_hash)
        out = Pipeline._refused(
            eid,
            row.namespace,
            "event_id_reused",
            f"event id already used for another payload (payload {stored_hash[:16]}; "
            f"this one {row.payload_hash[:16]})",
        )
        out.payload_hash = row.payload_hash
        out.reused_id = row.event_id
        return out

    def _parse_safely(self, raw: Any) -> InboxEvent:
        """`parse`, and an event it cannot handle is refused (its mates are not)."""
        try:
            return self.parse(raw)[0]
        except Exception as exc:  # noqa: BLE001 - one event never costs its message-mates
            try:
                eid = ids.event_id_for(raw, self.key)
            except Exception:  # noqa: BLE001
                eid = secrets.keyed_id(self.key, repr(raw).encode("utf-8", "backslashreplace"))
            log.warning("capture: could not read an event: %s", type(exc).__name__)
            return self._refused(
                eid, None, "invalid_event", f"event: unreadable ({type(exc).__name__})"
            )

    def _insert(self, unique: dict[Key, InboxEvent]) -> list[Key]:
        """Insert the rows; if the store refuses the batch for a value (not for being
        down), insert one by one and record each row it refuses as an invalid event."""
        try:
            return self.store.insert_events(list(unique.values()))
        except StoreRefused as exc:  # a value, not an outage (that one is transient)
            log.warning("capture: the store refused a batch (%s); one by one", exc.kind)
        new: list[Key] = []
        for k, row in unique.items():
            try:
                new += self.store.insert_events([row])
            except StoreRefused as exc:
                refused = self._refused(
                    row.event_id,
                    row.namespace,
                    "invalid_event",
                    f"event: the store cannot hold one of its values ({exc.kind})",
                )
                refused.payload_hash = row.payload_hash  # a redelivery stays a duplicate
                unique[k] = refused
                new += self.store.insert_events([refused])
        return new

    @staticmethod
    def _refused(eid: str, namespace: str | None, reason: str, detail: str) -> InboxEvent:
        return InboxEvent(
            event_id=eid,
            namespace=namespace,
            kind=None,
            heading=None,
            content=None,
            payload_hash=eid,
            status="rejected",
            reason=reason,
            detail=detail,
        )

    def accept(self, items: Sequence[Any]) -> list[Accepted]:
        """Validate, filter and persist events; idempotent by (namespace, event id)."""
        rows = [self._parse_safely(item) for item in items]
        # One key twice in one batch: the first wins, like a redelivery; the same key with
        # another payload is a reuse (below).
        unique: dict[Key, InboxEvent] = {}
        for r in rows:
            unique.setdefault(key_of(r), r)
        new = set(self._insert(unique))
        rows = [
            unique[key_of(r)] if unique[key_of(r)].payload_hash == r.payload_hash else r
            for r in rows
        ]
        stored = self.store.payload_hashes([k for k in unique if k not in new])
        stored.update((k, unique[k].payload_hash) for k in new)
        reused: dict[int, InboxEvent] = {}
        for n, r in enumerate(rows):
            k = key_of(r)
            if k in stored and stored[k] != r.payload_hash:
                reused[n] = self._reuse(r, stored[k])
        if reused:
            by_key = {key_of(r): r for r in reused.values()}
            new |= set(self.store.insert_events(list(by_key.values())))
            rows = [reused.get(n, r) for n, r in enumerate(rows)]
        # Refused messages may hold a secret the broker still keeps on disk: count them
        # so the sweeper rewrites the broker's append-only file (memsieve.ops.scrub).
        refused = sum(
            1
            for r in unique.values()
            if key_of(r) in new and r.status == "rejected" and r.reason not in _HARMLESS
        )
        scrub.note_refusals(self.redis, refused)
        out = []
        for r in rows:
            k = key_of(r)
            status = r.status if k in new else "duplicate"
            out.append(Accepted(r.event_id, r.namespace, status, r.reason, r.detail))
            if r.status == "rejected" and k in new:
                metrics.refused(r.reason)
                decisions_log.info(
                    "rejected",
                    extra={
                        "event_id": r.event_id,
                        "namespace": r.namespace,
                        "decision": "rejected",
                        "reason": r.reason,
                    },
                )
            new.discard(k)
        return out

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
            while not lock.lost:
                if budget is not None and time.monotonic() - started >= budget:
                    result.more = True
                    break
                # After one batch at least, so that every flush makes progress.
                if batches and yield_to is not None and yield_to():
                    result.more = True
                    break
                batches += 1
                try:
                    pending = self.store.claim_pending(
                        namespace, self.settings.batch_size, exclude=result.failed
                    )
                except StoreRefused as exc:
                    buried = self.store.bury_unloadable(namespace) if exc.data_error else []
                    if not buried:
                        raise
                    result.dead.extend(buried)
                    metrics.died(buried)
                    continue
                if not pending:
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
        finally:
            lock.release()
            result.lock_lost = lock.lost
        return result

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
            if self.store.mark_dead(namespace, p.event_id, "worker_lost", detail):
                metrics.decided("dead", p.kind)
                result.dead.append(p.event_id)
                decisions_log.info(
                    "dead",
                    extra={
                        "event_id": p.event_id,
                        "namespace": namespace,
                        "decision": "dead",
                        "reason": "worker_lost",
                    },
                )
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

    def _resolve_targets(
        self, namespace: str, pending: list[Pending], result: FlushResult
    ) -> list[Pending]:
        """Point each `supersedes` at the live memory it means, or refuse the event.

        A target that is no memory of this namespace (missing, or another tenant's) is
        refused (`supersedes_unknown`); one already superseded resolves to the live end of
        its chain, so a chain never gets two live versions. Two events of one batch that
        resolve to the same memory: the later waits for the next round (when it resolves
        to the memory the first wrote), which keeps the chain single.
        """
        targets = sorted({p.target_memory for p in pending if p.target_memory})
        if not targets:
            return pending
        live = self.store.live_successors(namespace, targets)
        keep: list[Pending] = []
        taken: set[str] = set()
        for p in pending:
            if not p.target_memory:
                keep.append(p)
                continue
            resolved = live.get(p.target_memory)
            if resolved is None:
                detail = "supersedes names no live memory chain of this namespace"
                if self.store.refuse_pending(namespace, p.event_id, "supersedes_unknown", detail):
                    metrics.refused("supersedes_unknown")
                    result.refused.append(p.event_id)
                    decisions_log.info(
                        "rejected",
                        extra={
                            "event_id": p.event_id,
                            "namespace": namespace,
                            "decision": "rejected",
                            "reason": "supersedes_unknown",
                        },
                    )
                continue
            if resolved in taken:
                result.deferred.append(p.event_id)
                continue
            taken.add(resolved)
            if resolved != p.target_memory:
                self.store.retarget(namespace, p.event_id, resolved)
                p.target_memory = resolved
            keep.append(p)
        return keep

    def _process(self, namespace: str, pending: list[Pending], result: FlushResult) -> None:
        pending = self._resolve_targets(namespace, pending, result)
        if not pending:
            return
        emb = self.embedder
        items = [(p.content_hash, memory.memory_text(p.heading, p.content)) for p in pending]
        try:
            outcomes = embed.embed_items(emb, self.store, items)
        except batching.EmbedderRefused as exc:
            # Key, quota or model trouble is the operator's to fix: every event stays
            # pending (nothing is dead-lettered for it) and the flush retries with backoff.
            log.error("embedder refused (%s): %s; events stay pending", exc.reason, exc)
            raise errors.TransientError(f"embedder refused: {exc.reason}") from exc
        ready: list[tuple[Pending, embed.Vector]] = []
        unavailable: list[str] = []
        refused = 0
        retry_after: float | None = None
        for p, v in zip(pending, outcomes, strict=True):
            if not isinstance(v, embed.EmbedFailure):
                ready.append((p, v))
            elif v.permanent:
                refused += 1
                if self.store.mark_dead(namespace, p.event_id, v.reason, v.message[:500]):
                    metrics.decided("dead", p.kind)
                    result.dead.append(p.event_id)
                    decisions_log.info(
                        "dead",
                        extra={
                            "event_id": p.event_id,
                            "namespace": namespace,
                            "decision": "dead",
                            "reason": v.reason,
                        },
                    )
            else:
                retry_after = max(retry_after or 0.0, v.retry_after or 0.0) or None
                if v.reason != batching.NOT_ATTEMPTED:
                    unavailable.append(p.event_id)
        if ready:
            self._write_ready(namespace, ready, result)
        if len(ready) + refused < len(pending):
            dead = self.store.fail_attempt(
                namespace, unavailable, "embedding provider unavailable", self.settings.max_attempts
            )
            result.dead.extend(dead)
            metrics.died(dead)
            raise errors.TransientError("embedding provider unavailable", retry_after=retry_after)

    def _write_ready(
        self, namespace: str, ready: list[tuple[Pending, embed.Vector]], result: FlushResult
    ) -> None:
        started = time.monotonic()
        outcomes = self._write(namespace, ready, result)
        metrics.wrote(time.monotonic() - started, True)
        metrics.outcomes(outcomes, metrics.kinds_of([p for p, _ in ready]))
        log.debug("wrote %d events in %.1f ms", len(outcomes), (time.monotonic() - started) * 1e3)
        for o in outcomes:
            if o.decision != "skipped":
                decisions_log.info(
                    o.decision,
                    extra={
                        "event_id": o.event_id,
                        "namespace": namespace,
                        "decision": o.decision,
                        "memory_id": o.memory_id,
                        "supersedes": o.supersedes,
                        "distance": o.distance,
                    },
                )
        result.outcomes.extend(outcomes)

    def _write(
        self, namespace: str, ready: list[tuple[Pending, embed.Vector]], result: FlushResult
    ) -> list[Outcome]:
        emb = self.embedder
        try:
            return self.store.write_batch(
                namespace,
                ready,
                emb.model,
                emb.dims,
                self.threshold_for,
                self.guards,
                judge=self.judge,
                on_conflict=self.settings.on_conflict_for(namespace),
            )
        except StoreRefused as exc:
            if len(ready) > 1:
                # A data error rolled back the batch: write one by one to isolate it.
                log.warning("batch write failed (%s); isolating", exc.kind)
                outcomes: list[Outcome] = []
                for item in ready:
                    outcomes.extend(self._write(namespace, [item], result))
                return outcomes
            ev_id = ready[0][0].event_id
            dead = self.store.fail_attempt(
                namespace,
                [ev_id],
                f"write failed: {exc.kind}: {str(exc.__cause__ or exc)[:300]}",
                self.settings.max_attempts,
            )
            result.dead.extend(dead)
            metrics.died(dead)
            if not dead:
                raise errors.TransientError(f"write of {ev_id} failed; will retry") from exc
            return []

    # -- synchronous write (no queue) ------------------------------------------------------
    def write_now(self, raw: Any) -> dict[str, Any]:
        """Accept one event and write it through the gate at once; returns its outcome."""
        accepted = self.accept([raw])[0]
        if accepted.status == "pending" or (accepted.status == "duplicate" and accepted.namespace):
            assert accepted.namespace is not None
            self.flush(accepted.namespace, wait=30.0)
        row = self.store.get_event(accepted.event_id, accepted.namespace) or {}
        return {
            "event_id": accepted.event_id,
            "decision": row.get("decision") or row.get("status"),
            "memory_id": str(row["memory_id"]) if row.get("memory_id") else None,
            "supersedes": str(row["supersedes"]) if row.get("supersedes") else None,
            "distance": row.get("distance"),
            "reason": row.get("reason"),
        }

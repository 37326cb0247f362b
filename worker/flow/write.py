"""Stages 2-4 of a flush batch: resolve targets -> embed -> gate -> apply.

`WriteStage._process` takes one claimed batch of a namespace (under its locks, see
`memsieve.flow.pipeline.Pipeline.flush`): it resolves explicit `supersedes` targets, embeds
the texts (cached, batched), dead-letters what the embedder refuses for good, and has the
store run the gate and apply its decisions in one transaction; a batch the store refuses
for a value is written one by one to isolate it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memsieve import embedders, errors, logs, metrics
from memsieve.embedders import batching
from memsieve.flow import embed
from memsieve.gate.decide import Guard
from memsieve.gate.judge import Judge
from memsieve.schemas import memory
from memsieve.settings import Settings
from memsieve.store.dberrors import StoreRefused
from memsieve.store.postgres import Outcome, Pending, Store

log = logging.getLogger("memsieve.pipeline")


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


class WriteStage:
    """One claimed batch: targets, embeddings, the gate, the write."""

    store: Store
    settings: Settings
    guards: tuple[Guard, ...]
    judge: Judge
    # The classifier's MiniLM encoder when it shares token vectors between processes
    # (memsieve.embedders.token_share): after each write it shares what the flush embedded.
    token_encoder: Any = None

    @property
    def embedder(self) -> embedders.Embedder:
        raise NotImplementedError

    def threshold_for(self, kind: str) -> float:
        raise NotImplementedError

    def _bury(
        self, namespace: str, p: Pending, reason: str, detail: str, result: FlushResult
    ) -> None:
        """Dead-letter one pending event (unless another worker got there first): counted,
        recorded in `result`, one decision line."""
        if self.store.mark_dead(namespace, p.event_id, reason, detail):
            metrics.decided("dead", p.kind)
            result.dead.append(p.event_id)
            logs.decision("dead", p.event_id, namespace, reason=reason)

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
                    logs.decision("rejected", p.event_id, namespace, reason="supersedes_unknown")
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
                self._bury(namespace, p, v.reason, v.message[:500], result)
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
        if self.token_encoder is not None:
            self.token_encoder.absorb()
        metrics.wrote(time.monotonic() - started, True)
        metrics.outcomes(outcomes, metrics.kinds_of([p for p, _ in ready]))
        log.debug("wrote %d events in %.1f ms", len(outcomes), (time.monotonic() - started) * 1e3)
        for o in outcomes:
            if o.decision != "skipped":
                logs.decision(
                    o.decision,
                    o.event_id,
                    namespace,
                    memory_id=o.memory_id,
                    supersedes=o.supersedes,
                    distance=o.distance,
                )
        result.outcomes.extend(outcomes)

    def gate_write(
        self, namespace: str, ready: Sequence[tuple[Pending, embed.Vector]]
    ) -> list[Outcome]:
        """One transaction: the gate with this pipeline's embedder, thresholds, guards,
        judge and conflict policy over `ready`, its decisions applied."""
        emb = self.embedder
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

    def _write(
        self, namespace: str, ready: list[tuple[Pending, embed.Vector]], result: FlushResult
    ) -> list[Outcome]:
        try:
            return self.gate_write(namespace, ready)
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

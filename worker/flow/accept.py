"""Stage 1, capture: raw items -> validated, filtered rows in the durable inbox.

`CaptureStage.accept` never raises on input: each item becomes a pending row or a refused
one with a reason, idempotent by (namespace, event id). Part of `memsieve.flow.pipeline.
Pipeline`, which provides the store, the Redis client, the policy and the install key.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis
from memsieve import ids, logs, metrics
from memsieve.capture import policy, secrets
from memsieve.delivery import stamp
from memsieve.ops import scrub
from memsieve.schemas import events as ev
from memsieve.store.dberrors import StoreRefused
from memsieve.store.postgres import InboxEvent, Store

log = logging.getLogger("memsieve.pipeline")
# Refusals whose message holds only a lesson the policy did not want (no secret found).
_HARMLESS = frozenset(policy.REASONS) - {"secret"}


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
    stamped: bool = False  # its producer's scan stamp verified: not scanned again here


class CaptureStage:
    """validate -> policy -> inbox, for one message's items."""

    store: Store
    redis: redis.Redis
    policy: policy.PolicyConfig
    key: bytes

    def read(self, raw: Any, given: Any = None) -> tuple[InboxEvent, ev.CaptureEvent | None, bool]:
        """Turn one raw item into an inbox row: pending, or rejected with a reason; and
        whether its producer's stamp spared it the secret scan.

        Never raises on input. A refused item keeps no text that could hold a secret:
        invalid events keep only their id and the validation message; events refused for
        a secret keep the redacted text and a fingerprint. `given`: the producer's scan
        stamp for this item, if any: the secret scan is skipped only when it verifies for
        exactly the fields of the event validated here (memsieve.delivery.stamp).
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
            return row, None, False
        scanned = given is not None and stamp.verifies(
            stamp.stamp_key(self.key), policy.event_fields(event), given
        )
        verdict = policy.evaluate(event, self.policy, self.key, scanned=scanned)
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
            # Naming a memory overrides the gate (distance, guards, judge): a human's
            # correction may, any other event would hide a fact it only claims to replace.
            # Another kind's `supersedes` stays in its payload and is not acted on: the gate
            # decides as for any event.
            target_memory=event.supersedes if event.kind is ev.Kind.correction else None,
        )
        if not verdict.admitted:
            row.status, row.reason, row.detail = "rejected", verdict.reason, verdict.detail
            if verdict.content_withheld:
                row.content = None  # never scanned: it may hold anything
            if verdict.reason == "secret":
                row.heading = verdict.redacted_heading
                row.content = verdict.redacted_content
                row.payload_hash = verdict.fingerprint or row.payload_hash
                row.tags = []
                row.agent = row.session = row.target_memory = None
                if "namespace" in verdict.secret_fields:
                    row.namespace = None
            return row, None, scanned
        return row, event, scanned

    @staticmethod
    def _reuse(row: InboxEvent, stored_hash: str) -> InboxEvent:
        """The row of a payload whose event id was already used for another payload.

        Recorded, never dropped: under an id derived from the reused id and this payload's
        hash (so a redelivery of it is a duplicate), refused with both hashes in the
        detail and the reused id in `reused_id`. It keeps no text.
        """
        eid = ids.reused_event_id(row.event_id, row.payload_hash)
        out = CaptureStage._refused(
            eid,
            row.namespace,
            "event_id_reused",
            f"event id already used for another payload (payload {stored_hash[:16]}; "
            f"this one {row.payload_hash[:16]})",
        )
        out.payload_hash = row.payload_hash
        out.reused_id = row.event_id
        return out

    def _parse_safely(self, raw: Any, given: Any = None) -> tuple[InboxEvent, bool]:
        """`read`, and an event it cannot handle is refused (its mates are not)."""
        try:
            row, _, scanned = self.read(raw, given)
            return row, scanned
        except Exception as exc:  # noqa: BLE001 - one event never costs its message-mates
            try:
                eid = ids.event_id_for(raw, self.key)
            except Exception:  # noqa: BLE001
                eid = secrets.keyed_id(self.key, repr(raw).encode("utf-8", "backslashreplace"))
            log.warning("capture: could not read an event: %s", type(exc).__name__)
            refused = self._refused(
                eid, None, "invalid_event", f"event: unreadable ({type(exc).__name__})"
            )
            return refused, False

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

    def accept(
        self, items: Sequence[Any], stamps: Sequence[str | None] | None = None
    ) -> list[Accepted]:
        """Validate, filter and persist events; idempotent by (namespace, event id).
        `stamps`: the producer's scan stamps, one per item (`parse`)."""
        given = stamps if stamps is not None and len(stamps) == len(items) else [None] * len(items)
        read = [self._parse_safely(item, s) for item, s in zip(items, given, strict=True)]
        rows = [row for row, _ in read]
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
        for r, (_, stamped) in zip(rows, read, strict=True):
            k = key_of(r)
            status = r.status if k in new else "duplicate"
            out.append(Accepted(r.event_id, r.namespace, status, r.reason, r.detail, stamped))
            if r.status == "rejected" and k in new:
                metrics.refused(r.reason)
                logs.decision("rejected", r.event_id, r.namespace, reason=r.reason)
            new.discard(k)
        return out

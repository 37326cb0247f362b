"""The inbox: the events ledger, from insert to a terminal state (a mixin of Store)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memsieve.store import dberrors, queries
from memsieve.store.connect import Connected
from memsieve.store.rows import InboxEvent, Pending, to_db_text


class Inbox(Connected):
    def insert_events(self, rows: Sequence[InboxEvent]) -> list[tuple[str, str]]:
        """Insert into the ledger; a (namespace, event id) seen before is left alone.
        Returns the keys inserted: (namespace or "", event id)."""
        if not rows:
            return []
        params = [
            (
                r.event_id,
                to_db_text(r.namespace),
                r.kind,
                to_db_text(r.heading),
                to_db_text(r.content),
                [to_db_text(t) for t in r.tags],
                r.occurred_at,
                to_db_text(r.agent),
                to_db_text(r.session),
                r.target_memory,
                r.payload_hash,
                r.status,
                r.reason,
                to_db_text(r.detail),
                r.reused_id,
                r.status != "pending",
            )
            for r in rows
        ]
        new: list[tuple[str, str]] = []
        # One pipelined, prepared statement for the whole message (a backfill sends hundreds
        # of events per message): one round trip instead of one per row.
        with self.connection() as conn, conn.cursor() as cur:
            cur.executemany(queries.QUERIES["insert_event"], params, returning=True)
            while True:
                row = cur.fetchone()
                if row is not None:
                    new.append((row[0], row[1]))
                if not cur.nextset():
                    break
        return new

    def payload_hashes(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """The recorded payload hash of each (namespace or "", event id) that exists."""
        if not keys:
            return {}
        with self.connection() as conn, conn.cursor() as cur:
            rows = queries.all(
                cur, "payload_hashes", ([ns for ns, _ in keys], [eid for _, eid in keys])
            )
        return {(r[0], r[1]): r[2] for r in rows}

    def get_event(
        self, event_id: str, namespace: str | None | object = ...
    ) -> dict[str, Any] | None:
        """The ledger row of `event_id` in `namespace` (None: the rows of no namespace);
        without `namespace`, the first row of that id (ids are per namespace)."""
        with self.reading() as cur:
            if namespace is ...:
                return queries.one(cur, "first_event_by_id", (event_id,))  # type: ignore[no-any-return]
            return queries.one(cur, "event", (namespace, event_id))  # type: ignore[no-any-return]

    def claim_pending(
        self, namespace: str, limit: int, exclude: Sequence[str] = ()
    ) -> list[Pending]:
        """The oldest pending events of a namespace (the caller holds the namespace lock),
        leaving out `exclude` (events that already failed in this flush)."""
        # Here, not at import: the read commands need no pydantic.
        from memsieve.schemas.memory import content_hash

        with self.connection() as conn, conn.cursor() as cur:
            rows = queries.all(cur, "claim_pending", (namespace, list(exclude), limit))
        return [
            Pending(*r[:11], content_hash(r[3], r[4]), r[11])  # type: ignore[arg-type, call-arg]
            for r in rows
        ]

    def pending_ahead(self, namespace: str, limit: int) -> list[tuple[str, str]]:
        """(content_hash, memory text) of the oldest pending events of a namespace that no
        flush has claimed: what its holder claims next (Pipeline.embed_ahead)."""
        from memsieve.schemas.memory import content_hash, memory_text

        with self.connection() as conn, conn.cursor() as cur:
            rows = queries.all(cur, "pending_ahead", (namespace, limit))
        return [(content_hash(h, c), memory_text(h, c)) for h, c in rows]

    def bury_unloadable(self, namespace: str) -> list[str]:
        """Pending events of `namespace` whose row cannot be loaded (a value written before
        validation refused it, e.g. a date past year 9999 in this session's time zone) go
        dead with a reason, so that they never block their namespace. Returns their ids."""
        with self.connection() as conn, conn.cursor() as cur:
            ids = [r[0] for r in queries.all(cur, "pending_ids", (namespace,))]
        dead: list[str] = []
        for eid in ids:
            try:
                with self.connection() as conn, conn.cursor() as cur:
                    queries.all(cur, "load_pending", (namespace, eid))
            except dberrors.StoreRefused as exc:
                if not exc.data_error:
                    raise
                from memsieve.schemas.events import OCCURRED_MAX, OCCURRED_MIN

                detail = f"its stored row cannot be loaded: {exc.kind}"
                with self.connection() as conn, conn.cursor() as cur:
                    params = (detail, OCCURRED_MIN, OCCURRED_MAX, namespace, eid)
                    if queries.execute(cur, "bury_unloadable", params) == 1:
                        dead.append(eid)
        return dead

    def set_claimed(self, namespace: str, event_ids: Sequence[str], claimed: bool) -> None:
        """Count a flush's claim on these events (claimed=True), or clear it when the flush
        is done with them, whatever the outcome (claimed=False)."""
        if not event_ids:
            return
        with self.connection() as conn, conn.cursor() as cur:
            queries.execute(cur, "set_claimed", (claimed, namespace, list(event_ids)))

    def pending_namespaces(self, older_than_s: float = 0.0) -> list[str]:
        with self.connection() as conn, conn.cursor() as cur:
            rows = queries.all(cur, "pending_namespaces", (older_than_s,))
        return [r[0] for r in rows]

    def has_pending(self, namespace: str) -> bool:
        return self.pending_at_least(namespace, 1)

    def pending_at_least(self, namespace: str, n: int) -> bool:
        """Whether `namespace` has `n` pending events or more (counting stops at `n`)."""
        with self.connection() as conn, conn.cursor() as cur:
            row = queries.one(cur, "pending_at_least", (namespace, n))
        return row is not None and row[0] >= n

    def fail_attempt(
        self, namespace: str, event_ids: Sequence[str], reason: str, max_attempts: int
    ) -> list[str]:
        """Count a failed attempt; events that used up their attempts go dead. Returns those."""
        if not event_ids:
            return []
        params = {"detail": reason, "max": max_attempts, "ns": namespace, "ids": list(event_ids)}
        with self.connection() as conn, conn.cursor() as cur:
            rows = queries.all(cur, "fail_attempt", params)
        return [r[0] for r in rows if r[1] == "dead"]

    def _finish(self, status: str, namespace: str, event_id: str, reason: str, detail: str) -> bool:
        with self.connection() as conn, conn.cursor() as cur:
            params = (status, reason, detail, namespace, event_id)
            return queries.execute(cur, "finish_pending", params) == 1

    def mark_dead(self, namespace: str, event_id: str, reason: str, detail: str) -> bool:
        return self._finish("dead", namespace, event_id, reason, detail)

    def refuse_pending(self, namespace: str, event_id: str, reason: str, detail: str) -> bool:
        """A pending event refused at flush time (e.g. its `supersedes` names no memory)."""
        return self._finish("rejected", namespace, event_id, reason, detail)

    def retarget(self, namespace: str, event_id: str, memory_id: str) -> None:
        """Record the live memory a pending event's `supersedes` was resolved to."""
        with self.connection() as conn, conn.cursor() as cur:
            queries.execute(cur, "retarget", (memory_id, namespace, event_id))

    def live_successors(self, namespace: str, memory_ids: Sequence[str]) -> dict[str, str]:
        """For each id of a memory of `namespace`: itself if live, else the live end of the
        chain that superseded it. Ids of no memory of the namespace, and chains that end in
        a deleted row (a revert), are absent."""
        if not memory_ids:
            return {}
        with self.connection() as conn, conn.cursor() as cur:
            rows = queries.all(cur, "live_successors", (list(memory_ids), namespace))
        return {r[0]: r[1] for r in rows}

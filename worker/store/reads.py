"""Reads for the CLI, the MCP server and history: each one named query (a mixin of Store).

Callers never pass SQL: they call these methods, or, for a read or a write that takes
several statements (lineage, explain, revert, resolve), hold `reading()` / `locked()` and
run named queries (memsieve.store.queries) on the cursor.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memsieve.store.connect import Connected


class Reads(Connected):
    # -- the ledger ---------------------------------------------------------------------
    def list_events(
        self,
        namespace: str | None = None,
        status: str | None = None,
        event_id: str | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Ledger rows, newest first; each filter applies when given. `event_id` also finds
        the rows of later payloads that reused it."""
        params = {"ns": namespace, "status": status, "eid": event_id, "limit": limit}
        return self.rows("events_list", params)

    def event_stats(self) -> list[dict[str, Any]]:
        """Event counts by namespace ('-': none), status and decision or reason."""
        return self.rows("event_stats")

    def memory_stats(self) -> list[dict[str, Any]]:
        """Per namespace: live memories, all versions, open conflicts."""
        return self.rows("memory_stats")

    def ledger_rows(self, keys: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        """The rows (ns_key, event_id, status, decision, reason, payload_hash) of these
        (namespace or "", event id) keys that exist."""
        if not keys:
            return []
        return self.rows("ledger_rows", ([k[0] for k in keys], [k[1] for k in keys]))

    def ledger_outcomes(self, namespace: str, event_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The outcome columns of these event ids of one namespace."""
        return self.rows("ledger_outcomes", (namespace, list(event_ids)))

    def event_namespaces(self, event_id: str, among: Sequence[str] | None = None) -> list[str]:
        """The namespace keys ('' for rows refused before a namespace was read) that use
        an event id, sorted; only those in `among` when it is given."""
        if among is None:
            rows = self.rows("event_namespaces", (event_id,))
        else:
            rows = self.rows("event_namespaces_among", (event_id, list(among)))
        return [r["ns_key"] for r in rows]

    # -- memories -----------------------------------------------------------------------
    def memory_namespace(self, memory_id: str) -> str | None:
        """The namespace of a memory (a valid UUID), or None if there is no such memory."""
        rows = self.rows("memory_namespace", (memory_id,))
        return rows[0]["namespace"] if rows else None

    def revision_link(self, revision: int) -> tuple[str, str] | None:
        """(namespace, newer memory id) of a revision, or None."""
        rows = self.rows("revision_link", (revision,))
        return (rows[0]["namespace"], rows[0]["newer_id"]) if rows else None

    def live_as_of(self, namespace: str, as_of: datetime) -> list[dict[str, Any]]:
        """Every memory live in `namespace` at `as_of`, oldest first."""
        return self.rows("live_as_of", {"ns": namespace, "t": as_of})

    # -- conflicts ----------------------------------------------------------------------
    def open_conflicts(self, namespace: str | None = None) -> list[dict[str, Any]]:
        """Open conflicts with both members' text, oldest first (one namespace, or all)."""
        return self._conflicts(ns=namespace, open_only=True)

    def conflicts_of(self, memory_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Every conflict, open or closed, one of these memories is part of."""
        return self._conflicts(ids=list(memory_ids)) if memory_ids else []

    def conflict(self, conflict_id: int) -> dict[str, Any] | None:
        rows = self._conflicts(id=conflict_id)
        return rows[0] if rows else None

    def _conflicts(
        self,
        id: int | None = None,  # noqa: A002 - the query's parameter
        ids: list[str] | None = None,
        ns: str | None = None,
        open_only: bool = False,
    ) -> list[dict[str, Any]]:
        return self.rows("conflicts", {"id": id, "ids": ids, "ns": ns, "open_only": open_only})

    def memory_open_conflicts(self, memory_id: str) -> list[dict[str, Any]]:
        """The open conflicts of one memory ([] on a store older than migration 100)."""
        if not self.rows("has_conflicts_table")[0]["ok"]:
            return []
        return self.rows("memory_open_conflicts", {"id": memory_id})

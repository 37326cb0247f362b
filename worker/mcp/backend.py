"""What the MCP tools do, without MCP: a namespace-scoped facade over capture and the store.

Every operation is synchronous and checks the scope first; the server (memsieve.mcp.server)
runs them in a worker thread. Nothing here echoes caller text in an error: a refusal names
fields, kinds and ids, never a value that could hold a secret.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

# Imported here, in the main thread, before any tool thread runs: detect_secrets (under
# memsieve.capture) has circular imports that fail when two threads import it at once.
from memsieve import client, embedders, errors
from memsieve.capture import secrets
from memsieve.cli.common import dumps
from memsieve.delivery import stamp
from memsieve.history import explain as explain_mod
from memsieve.history import lineage
from memsieve.history.format import is_uuid, parse_time
from memsieve.ids import LedgerRef, ledger_ref
from memsieve.mcp.stack import Scope, Stack, ToolRefusal

__all__ = ["MAX_K", "MAX_WAIT", "Backend", "Scope", "ToolRefusal"]

log = logging.getLogger("memsieve.mcp")

KINDS = ("retro", "correction", "failure", "pattern")
MAX_WAIT = 120.0
MAX_K = 50
POLL = 0.2


@dataclass
class Backend(Stack):
    """Capture, recall, history and explain for one scope, against one settings object
    (the stack it runs on, started on first use: memsieve.mcp.stack)."""

    # -- capture -----------------------------------------------------------------------------
    def remember(
        self,
        *,
        kind: str,
        heading: str,
        content: str,
        namespace: str | None = None,
        tags: Sequence[str] | None = None,
        supersedes: str | None = None,
        event_id: str | None = None,
        wait_seconds: float = 0.0,
    ) -> dict[str, Any]:
        ns = self.scope.pick(namespace)
        if not 0 <= wait_seconds <= MAX_WAIT:
            raise ToolRefusal(f"wait_seconds must be between 0 and {MAX_WAIT:g}")
        event: dict[str, Any] = {
            "namespace": ns,
            "kind": kind,
            "heading": heading,
            "content": content,
            "source": {"agent": self.agent},
        }
        if not event_id:
            # With an event_id (an idempotency key) no call time is stamped: the same call
            # sent again is the same payload, a redelivery, not a reuse of the id.
            event["occurred_at"] = datetime.now(UTC).isoformat()
        if tags:
            event["tags"] = list(tags)
        if supersedes:
            event["supersedes"] = supersedes
        if event_id:
            event["event_id"] = event_id
        # Checked before any service is touched: a secret never reaches the broker.
        try:
            checked = client.check(event)
        except client.Refused as exc:
            raise ToolRefusal(f"refused ({exc.reason}): {exc.detail}; nothing was queued") from None
        settings = self.ready()
        with self._lock:
            if self._client is None:
                self._client = client.CaptureClient(
                    settings.broker_url or "",
                    timeout=5.0,
                    # With the install key (when this machine holds it) a clean event goes
                    # out stamped, and the worker does not scan it a second time.
                    install_key=stamp.install_key_if_present(settings.key_path),
                )
        # Where the ledger will record this payload: its id in its namespace, or, if the
        # namespace used the id for another payload, its own `event_id_reused` row.
        ref = ledger_ref(checked.model_dump(mode="json", exclude_none=True))
        try:
            eid = self._client.capture(checked)
        except client.Unavailable as exc:
            raise ToolRefusal(f"the queue did not take the event: {exc}") from None
        out: dict[str, Any] = {"event_id": eid, "namespace": ns, "status": "queued"}
        if wait_seconds > 0:
            ref = LedgerRef(ns, eid, ref.payload_hash)
            out.update(self._outcome(ref, time.monotonic() + wait_seconds))
        return self._with_notice(out)

    def _outcome(self, ref: LedgerRef, deadline: float) -> dict[str, Any]:
        """The outcome of this call's own ledger row, never another event's: ids are per
        namespace, and a payload that reused an id is answered with its own row."""
        keys = [ref.event_id] + ([ref.reused_id] if ref.reused_id else [])
        while True:
            rows = self._store.ledger_outcomes(ref.namespace, keys)
            by = {r["event_id"]: r for r in rows}
            row = ref.own_row(
                by.get(ref.event_id), by.get(ref.reused_id) if ref.reused_id else None
            )
            if row is not None and row["status"] != "pending":
                out = {"status": row["status"]}
                if row["event_id"] != ref.event_id:
                    # Its own row: the id this payload is recorded under, and the id it reused.
                    out.update(event_id=row["event_id"], reused_id=row["reused_id"])
                if row["status"] == "written":
                    out.update(decision=row["decision"], memory_id=row["memory_id"])
                    if row["supersedes"]:
                        out["supersedes"] = row["supersedes"]
                    conflicts = self._open_conflicts(row["memory_id"])
                    if conflicts:
                        out["conflicts"] = conflicts
                else:
                    out.update(reason=row["reason"], detail=row["detail"])
                return out
            if time.monotonic() >= deadline:
                return {
                    "status": "pending" if row else "queued",
                    "note": "not decided within wait_seconds; ask explain with the event_id later",
                }
            time.sleep(POLL)

    def _open_conflicts(self, memory_id: str | None) -> list[dict[str, Any]]:
        """The open conflicts a memory is in (an update kept beside the memory it
        contradicts), on a store that records them (memory_conflicts); else []."""
        if not memory_id:
            return []
        return [
            {
                "conflict_id": r["conflict_id"],
                "with": r["newer_id"] if r["older_id"] == memory_id else r["older_id"],
                "this_is": "older" if r["older_id"] == memory_id else "newer",
                "detail": r["detail"],
            }
            for r in self._store.memory_open_conflicts(memory_id)
        ]

    # -- reading -----------------------------------------------------------------------------
    def _embed(self, query: str) -> tuple[list[float], str]:
        with self._embed_lock:
            return self._embed_locked(query)

    def _embed_locked(self, query: str) -> tuple[list[float], str]:
        if self._embedder is None:
            emb = embedders.from_settings(self.ready())
            bound = self._store.bound_embedder()
            if bound and (bound["model"] != emb.model or int(bound["dims"]) != emb.dims):
                raise ToolRefusal(
                    f"the store holds {bound['model']} vectors; this server embeds with "
                    f"{emb.model} (set MEMSIEVE_EMBEDDER to match)"
                )
            self._embedder = emb
        return list(self._embedder.embed([query])[0]), self._embedder.model

    def recall(
        self, *, query: str, namespace: str | None = None, k: int = 5, as_of: str | None = None
    ) -> dict[str, Any]:
        ns = self.scope.pick(namespace)
        if not 1 <= k <= MAX_K:
            raise ToolRefusal(f"k must be between 1 and {MAX_K}")
        if not query.strip():
            raise ToolRefusal("query is empty")
        when = None
        if as_of:
            try:
                when = parse_time(as_of)
            except errors.ConfigError:
                raise ToolRefusal(
                    "as_of is not a date or time (use e.g. 2026-01-15 or 2026-01-15T09:00Z)"
                ) from None
        self.ready()
        vector, model = self._embed(query)
        if when is not None:
            rows = [vars(r) for r in lineage.recall_as_of(self._store, ns, vector, model, when, k)]
        else:
            rows = self._store.recall(ns, vector, model, k)
        memories = []
        for r in rows:
            m = {
                "memory_id": r["memory_id"],
                "kind": r["kind"],
                "heading": r["heading"],
                "content": r["content"],
                "tags": list(r.get("tags") or []),
                "distance": round(float(r["distance"]), 6),
                "created_at": _iso(r["created_at"]),
            }
            # Open conflicts (an update kept beside the memory it contradicts), when the
            # store marks them: [{"conflict_id", "with", "this_is": "older"|"newer", "detail"}].
            m["conflicts"] = _jsonable(r.get("conflicts") or [])
            memories.append(m)
        out: dict[str, Any] = {"namespace": ns, "memories": memories}
        if when is not None:
            out["as_of"] = when.isoformat()
        return self._with_notice(out)

    def history(self, *, memory_id: str) -> dict[str, Any]:
        missing = ToolRefusal(f"no memory with id {_safe_id(memory_id)} in this server's scope")
        if not is_uuid(memory_id):
            raise missing
        self.ready()
        lin = lineage.lineage(self._store, memory_id)
        if lin is None or not all(self.scope.allows(v.namespace) for v in lin.versions):
            raise missing
        return self._with_notice(
            {"memory_id": memory_id, "text": lin.text, "lineage": _jsonable(lin.to_dict())}
        )

    def explain(self, *, id: str, namespace: str | None = None) -> dict[str, Any]:
        missing = ToolRefusal(f"no memory or event with id {_safe_id(id)} in this server's scope")
        if not id.strip():
            raise missing
        if namespace:
            self.scope.pick(namespace)  # refuses a namespace outside the scope
        self.ready()
        owner = self._store.memory_namespace(id) if is_uuid(id) else None
        if owner is not None:
            # A memory id is global: explained only if it (and its chain) is in scope.
            if not self.scope.allows(owner) or (namespace and owner != namespace):
                raise missing
            where: str | None = owner
        else:
            # Event ids are per namespace: only the events of this scope are looked at,
            # another tenant's event of the same id is neither shown nor mentioned.
            wanted = [namespace] if namespace else list(self.scope.namespaces)
            keys = self._store.event_namespaces(id, among=wanted)
            if not keys:
                raise missing
            if len(keys) > 1:
                raise ToolRefusal(
                    f"event id {_safe_id(id)} is used in more than one namespace of this "
                    "server's scope (" + ", ".join(keys) + "): give namespace"
                )
            where = keys[0]
        try:
            found = explain_mod.explain(self._store, id, where)
        except errors.PermanentError:
            raise missing from None
        d = found.to_dict()
        return self._with_notice(
            {
                "id": d["id"],
                "subject": d["subject"],
                "outcome": d["outcome"],
                "live": d["live"],
                "text": d["text"],
                "facts": _jsonable(d["facts"]),
            }
        )


def _safe_id(value: str) -> str:
    """An id to repeat in a message: only if it looks like one (no free text echoed)."""
    if re.fullmatch(r"[A-Za-z0-9_.:-]{1,80}", value or ""):
        if not secrets.find_secrets(value):
            return value
    return "(given)"


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def _jsonable(obj: Any) -> Any:
    return json.loads(dumps(obj))

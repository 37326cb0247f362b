"""What the MCP tools do, without MCP: a namespace-scoped facade over capture and the store.

Every operation is synchronous and checks the scope first; the server (memsieve.mcp.server)
runs them in a worker thread. Nothing here echoes caller text in an error: a refusal names
fields, kinds and ids, never a value that could hold a secret.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# Imported here, in the main thread, before any tool thread runs: detect_secrets (under
# memsieve.capture) has circular imports that fail when two threads import it at once.
import psycopg
import psycopg_pool
from memsieve import client, embedders, errors
from memsieve.app import configure
from memsieve.capture import secrets
from memsieve.cli.common import dumps, resolve
from memsieve.cli.service import _child_env
from memsieve.history import explain as explain_mod
from memsieve.history import lineage
from memsieve.history.format import is_uuid, parse_time
from memsieve.ids import LedgerRef, ledger_ref
from memsieve.ops.services import EmbeddedServices
from memsieve.settings import Settings
from memsieve.store.postgres import Store

log = logging.getLogger("memsieve.mcp")

KINDS = ("retro", "correction", "failure", "pattern")
MAX_WAIT = 120.0
MAX_K = 50
POLL = 0.2


class ToolRefusal(Exception):
    """A call the server answers with a tool error: the message is safe to show (no value
    the caller sent)."""


@dataclass(frozen=True)
class Scope:
    """The namespaces one server instance may read and write; nothing else is reachable."""

    namespaces: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.namespaces:
            raise errors.ConfigError("memsieve mcp needs at least one --namespace")

    def pick(self, namespace: str | None) -> str:
        """The namespace a call means: the one given (if in scope), or the only one."""
        if namespace is None or namespace == "":
            if len(self.namespaces) == 1:
                return self.namespaces[0]
            raise ToolRefusal(
                "namespace is required: this server serves " + ", ".join(self.namespaces)
            )
        if namespace not in self.namespaces:
            raise ToolRefusal(
                "namespace is outside this server's scope; it serves " + ", ".join(self.namespaces)
            )
        return namespace

    def allows(self, namespace: str | None) -> bool:
        return namespace is not None and namespace in self.namespaces


@dataclass
class Backend:
    """Capture, recall, history and explain for one scope, against one settings object.

    `ready()` fills in the service URLs on first use: configured ones win, else the embedded
    PostgreSQL and Redis under MEMSIEVE_HOME are started (as every CLI command does), and
    with worker="auto" a `memsieve worker` is started when none answers a ping.
    """

    settings: Settings
    scope: Scope
    worker: str = "auto"  # auto | yes | no
    agent: str = "mcp"
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _embed_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _resolved: Settings | None = field(default=None, repr=False)
    _store: Any = field(default=None, repr=False)
    _client: Any = field(default=None, repr=False)
    _embedder: Any = field(default=None, repr=False)
    _worker_proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _started_at: float | None = field(default=None, repr=False)
    notice: str | None = field(default=None, repr=False)

    # -- the stack ---------------------------------------------------------------------------
    def ready(self) -> Settings:
        """Resolved settings, starting what is missing (once; later calls return at once)."""
        if self._resolved is not None:
            return self._resolved
        with self._lock:
            if self._resolved is not None:
                return self._resolved
            t0 = time.monotonic()
            try:
                self._resolved = self._bring_up()
            except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
                log.error("database not reachable: %s", type(exc).__name__)
                raise ToolRefusal(
                    f"memsieve's database is not reachable ({type(exc).__name__}); the next "
                    "call tries again (see the server's log, or `memsieve up`)"
                ) from None
            except errors.ConfigError as exc:
                raise ToolRefusal(f"memsieve is not configured: {exc}") from None
            took = time.monotonic() - t0
            if took > 1.0:
                self.notice = f"memsieve started its services for this server ({took:.1f} s)"
            return self._resolved

    def _bring_up(self) -> Settings:
        services = EmbeddedServices(self.settings.home)
        embedded = not self.settings.database_url and not services.pg.running()
        settings = resolve(self.settings)
        store = Store(settings.database_url or "", max_size=2)
        try:
            store.migrate()
        except BaseException:
            store.close()
            raise
        self._store = store
        if self.worker == "yes" or (self.worker == "auto" and not self._worker_answers(settings)):
            self._start_worker(settings)
        if embedded:
            log.info("started the embedded PostgreSQL and Redis under %s", self.settings.home)
        return settings

    def _worker_answers(self, settings: Settings) -> bool:
        try:
            replies = configure(replace(settings)).control.ping(timeout=1.0)
        except Exception:  # noqa: BLE001 - no answer is the answer
            return False
        return bool(replies)

    def _start_worker(self, settings: Settings) -> None:
        logdir = Path(settings.home) / "logs"
        logdir.mkdir(parents=True, exist_ok=True, mode=0o700)
        out = open(logdir / "mcp-worker.log", "ab")
        # Never on our stdout: over stdio that is the protocol stream.
        self._worker_proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "memsieve.cli.main",
                "worker",
                f"--concurrency={settings.concurrency}",
                f"--hostname=mcp-{os.getpid()}@%h",
            ],
            env=_child_env(settings),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()
        log.info("started a worker (pid %d) for this MCP server", self._worker_proc.pid)

    def close(self) -> None:
        """Stop the worker this server started (warm shutdown), close connections. The
        embedded services stay up, as after any CLI command (`memsieve down` stops them)."""
        proc, self._worker_proc = self._worker_proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        if self._client is not None:
            self._client.close()
        if self._store is not None:
            self._store.close()

    def _with_notice(self, out: dict[str, Any]) -> dict[str, Any]:
        if self.notice:
            out["notice"] = self.notice
            self.notice = None  # said once, on the first call that had to wait
        return out

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
                self._client = client.CaptureClient(settings.broker_url or "", timeout=5.0)
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
            rows = self._store.query(
                "SELECT event_id, status, decision, reason, detail, reused_id,"
                " memory_id::text AS memory_id, supersedes::text AS supersedes, payload_hash"
                " FROM events WHERE ns_key = %s AND event_id = ANY(%s)",
                (ref.namespace, keys),
            )
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
        if not self._store.query("SELECT to_regclass('memory_conflicts') IS NOT NULL AS ok")[0][
            "ok"
        ]:
            return []
        rows = self._store.query(
            "SELECT id AS conflict_id, older_id::text AS older_id, newer_id::text AS newer_id,"
            " detail FROM memory_conflicts WHERE closed_at IS NULL"
            " AND (older_id = %s OR newer_id = %s) ORDER BY opened_at, id",
            (memory_id, memory_id),
        )
        return [
            {
                "conflict_id": r["conflict_id"],
                "with": r["newer_id"] if r["older_id"] == memory_id else r["older_id"],
                "this_is": "older" if r["older_id"] == memory_id else "newer",
                "detail": r["detail"],
            }
            for r in rows
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
        rows = []
        if is_uuid(id):
            rows = self._store.query("SELECT namespace FROM memories WHERE id = %s", (id,))
        if rows:
            # A memory id is global: explained only if it (and its chain) is in scope.
            if not self.scope.allows(rows[0]["namespace"]) or (
                namespace and rows[0]["namespace"] != namespace
            ):
                raise missing
            where: str | None = rows[0]["namespace"]
        else:
            # Event ids are per namespace: only the events of this scope are looked at,
            # another tenant's event of the same id is neither shown nor mentioned.
            wanted = [namespace] if namespace else list(self.scope.namespaces)
            keys = [
                r["ns_key"]
                for r in self._store.query(
                    "SELECT DISTINCT ns_key FROM events WHERE event_id = %s"
                    " AND ns_key = ANY(%s) ORDER BY ns_key",
                    (id, wanted),
                )
            ]
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

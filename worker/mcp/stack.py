"""The services behind the MCP tools: the scope, and the stack they run on (store, queue
client, embedder, and the worker this server starts when none answers).

The tools themselves are memsieve.mcp.backend.Backend, a Stack.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psycopg
import psycopg_pool
from memsieve import errors
from memsieve.app import configure
from memsieve.cli.common import resolve
from memsieve.cli.supervise import _child_env
from memsieve.ops.services import EmbeddedServices
from memsieve.settings import Settings
from memsieve.store import dberrors
from memsieve.store.postgres import Store

log = logging.getLogger("memsieve.mcp")


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
class Stack:
    """The services behind one MCP server: its settings, its scope, its store and client.

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
            except (
                dberrors.StoreUnavailable,
                psycopg.OperationalError,
                psycopg_pool.PoolTimeout,
            ) as exc:
                kind = getattr(exc, "kind", type(exc).__name__)
                log.error("database not reachable: %s", kind)
                raise ToolRefusal(
                    f"memsieve's database is not reachable ({kind}); the next "
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

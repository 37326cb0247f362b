"""The store's connections: one pool per process, database errors mapped at this edge.

Every store method runs its statements inside `connection()` (or `reading()` /
`locked()`), so whatever the driver raises leaves the store as a memsieve error:
`StoreUnavailable` (transient) or `StoreRefused` (permanent), see store/dberrors.py.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from memsieve.store import dberrors, queries
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool


def _configure(conn: psycopg.Connection) -> None:
    register_vector(conn)


class Connected:
    """A lazily opened pool, and the three ways a store method holds a connection."""

    def __init__(self, url: str, max_size: int = 4, min_size: int = 1) -> None:
        self.url = url
        self._pool: ConnectionPool | None = None
        self._pool_pid: int | None = None
        self._pool_lock = threading.Lock()
        self.max_size = max_size
        self.min_size = min_size

    @property
    def pool(self) -> ConnectionPool:
        # A pool must not cross fork(): Celery's prefork children each open their own.
        with self._pool_lock:
            if self._pool is None or self._pool_pid != os.getpid():
                self._pool = ConnectionPool(
                    self.url,
                    min_size=self.min_size,
                    max_size=self.max_size,
                    configure=_configure,
                    check=ConnectionPool.check_connection,
                    open=True,
                    timeout=30,
                )
                self._pool_pid = os.getpid()
            return self._pool

    def close(self) -> None:
        if self._pool is not None and self._pool_pid == os.getpid():
            self._pool.close()
        self._pool = None

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection (committed on a clean exit); driver errors mapped."""
        with dberrors.mapped(), self.pool.connection() as conn:
            yield conn

    @contextmanager
    def reading(self) -> Iterator[psycopg.Cursor[dict[str, Any]]]:
        """A dict-row cursor on a pooled connection, for reads that take several queries."""
        with self.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            yield cur

    @contextmanager
    def locked(self, namespace: str) -> Iterator[psycopg.Cursor[dict[str, Any]]]:
        """A dict-row cursor in one transaction holding the namespace's advisory lock, the
        lock of the write path: gate writes, reverts and resolutions of a namespace
        serialise on it."""
        with self.connection() as conn, conn.transaction():
            with conn.cursor(row_factory=dict_row) as cur:
                queries.execute(cur, "lock_namespace", (namespace,))
                yield cur

    def rows(self, name: str, params: Any = None) -> list[dict[str, Any]]:
        """Every row of the named query `name` (store/sql/queries.sql), as dicts."""
        with self.reading() as cur:
            return queries.all(cur, name, params)

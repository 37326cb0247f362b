"""Tests' own SQL: ad-hoc reads and fixture writes on the store's database.

Production code runs only the store's named queries; a test that wants to look at a table
directly (or plant a row no producer could send) says its SQL here, on the store's pool.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memsieve.store.postgres import Store
from psycopg.rows import dict_row


def query(
    store: Store, sql: str, params: Sequence[Any] | dict[str, Any] = ()
) -> list[dict[str, Any]]:
    """Run `sql` (a literal of the test's) and return its rows as dicts ([] if none)."""
    with store.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(sql, params)  # type: ignore[arg-type]
        return cur.fetchall() if cur.description else []

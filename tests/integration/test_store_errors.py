"""A real Postgres's errors leave the store as memsieve's two kinds (store/dberrors.py)."""

from __future__ import annotations

import psycopg
import pytest
from memsieve import errors
from memsieve.store import dberrors, queries
from memsieve.store.postgres import Store


def test_a_connection_killed_mid_transaction_is_transient(store: Store, db_url: str) -> None:
    with pytest.raises(dberrors.StoreUnavailable) as info:
        with store.locked("ns") as cur:
            pid = cur.connection.info.backend_pid
            with psycopg.connect(db_url, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            queries.all(cur, "revert_steps", ("00000000-0000-0000-0000-000000000000",))
    assert isinstance(info.value, errors.TransientError)
    assert info.value.sqlstate in ("57P01", None)  # admin shutdown, or the socket seen closed
    assert isinstance(info.value.__cause__, psycopg.OperationalError)
    # The pool replaces the dead connection: the next call works.
    assert store.memory_namespace("00000000-0000-0000-0000-000000000000") is None


def test_a_value_the_column_cannot_hold_is_permanent(store: Store) -> None:
    with pytest.raises(dberrors.StoreRefused) as info:
        store.retarget("ns", "e-1", "not-a-uuid")
    assert isinstance(info.value, errors.PermanentError)
    assert (info.value.sqlstate, info.value.kind) == ("22P02", "InvalidTextRepresentation")
    assert info.value.data_error


def test_an_undefined_table_is_permanent(store: Store, db_url: str) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("DROP TABLE memory_conflicts CASCADE")
    with pytest.raises(dberrors.StoreRefused) as info:
        store.open_conflicts()
    assert (info.value.sqlstate, info.value.kind) == ("42P01", "UndefinedTable")
    assert not info.value.data_error
    # A store older than the conflicts migration still answers the MCP's question.
    assert store.memory_open_conflicts("00000000-0000-0000-0000-000000000000") == []

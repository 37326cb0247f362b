"""Database errors leave the store as memsieve's two kinds (worker/store/dberrors.py).

Real psycopg error classes, looked up by SQLSTATE as the driver does for a server error.
"""

from __future__ import annotations

import psycopg
import psycopg_pool
import pytest
from memsieve import errors
from memsieve.store import dberrors

TRANSIENT = {
    "08006": "ConnectionFailure",
    "08001": "SqlclientUnableToEstablishSqlconnection",
    "57P01": "AdminShutdown",
    "57P02": "CrashShutdown",
    "57P03": "CannotConnectNow",
    "57014": "QueryCanceled",
    "40001": "SerializationFailure",
    "40P01": "DeadlockDetected",
    "55P03": "LockNotAvailable",
    "53300": "TooManyConnections",
    "53100": "DiskFull",
}
PERMANENT = {
    "22001": "StringDataRightTruncation",
    "22008": "DatetimeFieldOverflow",
    "22P02": "InvalidTextRepresentation",
    "23505": "UniqueViolation",
    "23503": "ForeignKeyViolation",
    "23502": "NotNullViolation",
    "42P01": "UndefinedTable",
    "42703": "UndefinedColumn",
    "42601": "SyntaxError",
    "XX000": "InternalError_",
}


def _raised(exc: BaseException) -> errors.MemsieveError:
    with pytest.raises(errors.MemsieveError) as info, dberrors.mapped():
        raise exc
    assert info.value.__cause__ is exc
    return info.value


@pytest.mark.parametrize(("state", "name"), sorted(TRANSIENT.items()))
def test_outage_and_lost_race_are_transient(state: str, name: str) -> None:
    cls = psycopg.errors.lookup(state)
    assert cls.__name__ == name
    got = _raised(cls("boom"))
    assert isinstance(got, dberrors.StoreUnavailable)
    assert isinstance(got, errors.TransientError)
    assert (got.sqlstate, got.kind) == (state, name)
    assert str(got) == f"database: {name} [{state}]: boom"


@pytest.mark.parametrize(("state", "name"), sorted(PERMANENT.items()))
def test_bad_statement_or_value_is_permanent(state: str, name: str) -> None:
    cls = psycopg.errors.lookup(state)
    assert cls.__name__ == name
    got = _raised(cls("no"))
    assert isinstance(got, dberrors.StoreRefused)
    assert isinstance(got, errors.PermanentError)
    assert (got.sqlstate, got.kind) == (state, name)
    assert got.data_error is state.startswith("22")


def test_client_side_connection_loss_is_transient() -> None:
    # Raised by libpq, not the server: no SQLSTATE.
    got = _raised(psycopg.OperationalError("server closed the connection unexpectedly"))
    assert isinstance(got, dberrors.StoreUnavailable)
    assert got.sqlstate is None
    assert str(got) == "database: OperationalError: server closed the connection unexpectedly"


def test_pool_timeout_and_closed_connection_are_transient() -> None:
    assert isinstance(
        _raised(psycopg_pool.PoolTimeout("no connection in 30s")), errors.TransientError
    )
    assert isinstance(
        _raised(psycopg.InterfaceError("the connection is closed")), errors.TransientError
    )


def test_a_stored_value_the_driver_cannot_load_is_a_data_error() -> None:
    # Raised while loading a row (a date past year 9999 in the session's zone): no SQLSTATE.
    got = _raised(psycopg.DataError("timestamp too large (after year 10K)"))
    assert isinstance(got, dberrors.StoreRefused)
    assert got.sqlstate is None
    assert got.data_error


def test_client_side_programming_error_is_permanent() -> None:
    got = _raised(psycopg.ProgrammingError("query parameter missing: ns"))
    assert isinstance(got, dberrors.StoreRefused)
    assert not got.data_error


def test_other_errors_pass_through_unchanged() -> None:
    mine = errors.PermanentError("refused on purpose")
    with pytest.raises(errors.PermanentError) as info, dberrors.mapped():
        raise mine
    assert info.value is mine
    with pytest.raises(KeyError), dberrors.mapped():
        raise KeyError("x")


def test_message_keeps_one_line_of_the_server_text() -> None:
    cls = psycopg.errors.lookup("23505")
    got = _raised(cls('duplicate key value violates unique constraint "x"\nDETAIL: Key (h)=(v)'))
    assert (
        str(got)
        == 'database: UniqueViolation [23505]: duplicate key value violates unique constraint "x"'
    )

"""Database errors at the store's edge, mapped to the two kinds of memsieve.errors.

Transient (retry later): the server went away or is refusing work for now, or the
transaction lost a race the database detected (serialisation failure, deadlock, lock
timeout). Permanent (dead with a reason): the statement or its values are wrong, and
running it again gives the same answer (a data error, an integrity error, an undefined
table). Races the store expects (an event id seen before, a cached vector written twice)
never get here: their statements say ON CONFLICT.

The mapped error keeps the SQLSTATE and the driver's class name, and chains the original,
so a log line still says what Postgres said.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import psycopg_pool
from memsieve import errors

# SQLSTATE classes and codes that say "try again": connection exception (08), insufficient
# resources (53: too many connections, out of memory, disk full), operator intervention (57:
# admin/crash shutdown, cannot connect now, statement timeout), system error (58), and the
# rollbacks that a retry settles: 40001 serialization failure, 40P01 deadlock, 40003
# statement completion unknown, 55P03 lock not available, 55006 object in use.
TRANSIENT_CLASSES = frozenset({"08", "53", "57", "58"})
TRANSIENT_CODES = frozenset({"40001", "40P01", "40003", "55P03", "55006"})


class StoreUnavailable(errors.TransientError):
    """The database could not run the statement now; the same work may succeed later."""

    def __init__(self, message: str, sqlstate: str | None, kind: str) -> None:
        super().__init__(message)
        self.sqlstate, self.kind = sqlstate, kind


class StoreRefused(errors.PermanentError):
    """The database refused the statement or its values; running it again cannot help.

    `data_error`: a value the store cannot hold, or a stored value the driver cannot load
    (SQLSTATE class 22, or the driver's DataError, which has no SQLSTATE)."""

    def __init__(
        self, message: str, sqlstate: str | None, kind: str, data_error: bool = False
    ) -> None:
        super().__init__(message)
        self.sqlstate, self.kind, self.data_error = sqlstate, kind, data_error


def is_transient(exc: BaseException) -> bool:
    """Whether a driver or pool error is worth retrying."""
    if isinstance(exc, psycopg_pool.PoolTimeout | psycopg.InterfaceError):
        return True
    if not isinstance(exc, psycopg.Error):
        return False
    state = exc.sqlstate
    if state is None:
        # Raised by the client, not the server: a lost or unopenable connection.
        return isinstance(exc, psycopg.OperationalError)
    return state[:2] in TRANSIENT_CLASSES or state in TRANSIENT_CODES


def mapped_error(exc: psycopg.Error | psycopg_pool.PoolTimeout) -> errors.MemsieveError:
    """The memsieve error for a driver error (its message names the class and SQLSTATE)."""
    state = getattr(exc, "sqlstate", None)
    kind = type(exc).__name__
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    message = (
        f"database: {kind}" + (f" [{state}]" if state else "") + (f": {first}" if first else "")
    )
    if is_transient(exc):
        return StoreUnavailable(message, state, kind)
    return StoreRefused(message, state, kind, isinstance(exc, psycopg.DataError))


@contextmanager
def mapped() -> Iterator[None]:
    """Raise memsieve's transient / permanent errors for the driver's errors inside."""
    try:
        yield
    except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
        raise mapped_error(exc) from exc

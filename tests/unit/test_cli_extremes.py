"""Extreme arguments get a clear message, never a traceback (found by a black-box probe)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta, timezone

import pytest
from memsieve.cli.common import at_least_one
from memsieve.history.format import fmt_ts


def test_a_count_past_what_postgres_holds_is_refused_by_the_parser() -> None:
    # `events --limit 99999999999999999999` reached Postgres: "bigint out of range".
    with pytest.raises(argparse.ArgumentTypeError, match="at most"):
        at_least_one("99999999999999999999")
    assert at_least_one("100") == 100


@pytest.mark.parametrize(
    ("when", "shown"),
    [
        (datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-12))), "9999-12-31T23:59:59-12:00"),
        (datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14))), "0001-01-01T00:00:00+14:00"),
        (datetime(2026, 1, 12, 9, 0, tzinfo=UTC), "2026-01-12 09:00 UTC"),
    ],
)  # fmt: skip
def test_a_time_past_the_last_utc_datetime_is_shown_as_given(when: datetime, shown: str) -> None:
    # `recall --as-of 9999-12-31T23:59:59-12:00` raised OverflowError formatting it.
    assert fmt_ts(when) == shown

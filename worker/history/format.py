"""Small formatting and parsing helpers shared by lineage, explain, revert and the CLI."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, date, datetime, time

from memsieve import errors

_UUID = re.compile(r"^[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}$")


def is_uuid(value: str) -> bool:
    return bool(_UUID.match(value))


def canonical_id(value: str) -> str:
    """A UUID as the store writes it (lower case, dashed); anything else as given. Ids are
    accepted in upper case and without dashes, as `supersedes` accepts them."""
    return str(uuid.UUID(value)) if is_uuid(value) else value


def fmt_ts(ts: datetime | None) -> str:
    """'2026-01-12 09:00 UTC' (seconds only when there are any)."""
    if ts is None:
        return "-"
    try:
        ts = ts.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:59-12:00 is past the last UTC datetime
        return ts.isoformat()
    return ts.strftime(
        "%Y-%m-%d %H:%M:%S UTC" if ts.second or ts.microsecond else "%Y-%m-%d %H:%M UTC"
    )


def short(memory_id: str | None) -> str:
    return memory_id[:8] if memory_id else "-"


def quote(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return f"'{text if len(text) <= limit else text[: limit - 1] + '…'}'"


def parse_time(value: str) -> datetime:
    """An ISO 8601 date or timestamp; no zone means UTC, a bare date means 00:00 UTC."""
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
            return datetime.combine(date.fromisoformat(value.strip()), time(), UTC)
        ts = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise errors.ConfigError(
            f"--as-of: {value!r} is not a date or time (use e.g. 2026-01-15 or 2026-01-15T09:00Z)"
        ) from None
    return ts if ts.tzinfo else ts.replace(tzinfo=UTC)

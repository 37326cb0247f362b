"""Rows the store hands out and takes in (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass
class InboxEvent:
    """A row for the inbox, accepted or refused at capture."""

    event_id: str
    namespace: str | None
    kind: str | None
    heading: str | None
    content: str | None
    payload_hash: str
    status: str = "pending"  # pending | rejected | dead
    tags: list[str] = field(default_factory=list)
    occurred_at: datetime | None = None
    agent: str | None = None
    session: str | None = None
    target_memory: str | None = None
    reason: str | None = None
    detail: str | None = None
    # For an `event_id_reused` row: the ledger id whose payload differed (migration 080).
    reused_id: str | None = None


@dataclass
class Pending:
    event_id: str
    namespace: str
    kind: str
    heading: str
    content: str
    tags: list[str]
    occurred_at: datetime | None
    agent: str | None
    session: str | None
    target_memory: str | None
    attempts: int
    content_hash: str
    # Earlier claims of this event that never finished (a worker died while handling it).
    claims: int = 0


@dataclass
class Outcome:
    event_id: str
    decision: str  # inserted | superseded | merged | skipped (already terminal)
    memory_id: str | None
    supersedes: str | None
    distance: float | None
    reason: str


def to_db_text(value: str | None) -> str | None:
    """Postgres text cannot hold NUL; validation refuses it earlier, this is the last fence."""
    return None if value is None else value.replace("\x00", "\ufffd")

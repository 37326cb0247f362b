"""Backfills: sending the items of a source (read by ops/backfill_read.py) and following them.

Re-sending is idempotent because every item's event id is derived from where it came from
and what it says (the inbox ignores an id it has seen). Resumption uses a small checkpoint
(how many items of the source, in its fixed order, were handed to the broker); progress and
the summary are read from the ledger (the events table), so they stay right across crashes.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memsieve.ops.backfill_read import JSONL, MARKDOWN, Item, read_source, sections, source_files

__all__ = [
    "JSONL",
    "MARKDOWN",
    "Checkpoint",
    "Item",
    "Summary",
    "ledger_rows",
    "read_source",
    "sections",
    "source_files",
    "stamps",
    "summarize",
    "unique",
]

_LEDGER_CHUNK = 5000


def unique(items: Sequence[Item]) -> list[Item]:
    """First item of each ledger key (identical lines or sections are one event; the same id
    with another payload is an event of its own, recorded as a reuse)."""
    seen: set[tuple[str, str, str | None]] = set()
    out = []
    for it in items:
        if it.key not in seen:
            seen.add(it.key)
            out.append(it)
    return out


# -- checkpoint -------------------------------------------------------------------------
def _digest(ids: Sequence[str]) -> str:
    h = hashlib.sha256()
    for i in ids:
        h.update(i.encode() + b"\n")
    return h.hexdigest()


@dataclass
class Checkpoint:
    """How many items (in source order) were handed to the broker; written after each chunk."""

    file: Path
    source: str
    namespace: str | None
    total: int
    sent: int = 0
    prefix_digest: str = ""
    started_at: float = field(default_factory=time.time)

    @classmethod
    def load(
        cls, home: Path, source: Path, namespace: str | None, ids: Sequence[str]
    ) -> Checkpoint:
        key = hashlib.sha256(f"{source.resolve()}\x1f{namespace or ''}".encode()).hexdigest()[:20]
        file = home / "backfill" / f"{key}.json"
        ck = cls(file, str(source.resolve()), namespace, len(ids))
        try:
            data = json.loads(file.read_text())
        except (FileNotFoundError, ValueError):
            return ck
        sent = int(data.get("sent", 0))
        # The source changed under us: start over (the inbox makes re-sending harmless).
        if 0 < sent <= len(ids) and data.get("prefix_digest") == _digest(ids[:sent]):
            ck.sent, ck.prefix_digest = sent, data["prefix_digest"]
            ck.started_at = float(data.get("started_at", ck.started_at))
        return ck

    def advance(self, ids: Sequence[str], sent: int) -> None:
        self.sent, self.prefix_digest = sent, _digest(ids[:sent])
        self.file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_suffix(".tmp")
        tmp.write_text(
            json.dumps(
                {
                    "source": self.source,
                    "namespace": self.namespace,
                    "total": self.total,
                    "sent": self.sent,
                    "prefix_digest": self.prefix_digest,
                    "started_at": self.started_at,
                    "updated_at": time.time(),
                }
            )
        )
        os.replace(tmp, self.file)

    def reset(self) -> None:
        self.file.unlink(missing_ok=True)
        self.sent, self.prefix_digest = 0, ""


# -- the ledger's view ------------------------------------------------------------------
@dataclass
class Summary:
    """Where every event of a backfill stands, from the ledger. The parts add up to `events`."""

    items: int = 0
    events: int = 0
    written: Counter[str] = field(default_factory=Counter)  # inserted | superseded | merged
    rejected: Counter[str] = field(default_factory=Counter)  # by reason
    dead: Counter[str] = field(default_factory=Counter)  # by reason
    pending: int = 0
    unseen: int = 0  # not in the ledger (not sent yet, or still on the broker)

    @property
    def terminal(self) -> int:
        return sum(self.written.values()) + sum(self.rejected.values()) + sum(self.dead.values())

    def add(self, status: str, decision: str | None, reason: str | None, n: int = 1) -> None:
        if status == "written":
            self.written[decision or "?"] += n
        elif status == "rejected":
            self.rejected[reason or "?"] += n
        elif status == "dead":
            self.dead[reason or "?"] += n
        else:
            self.pending += n

    def as_dict(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "events": self.events,
            "inserted": self.written["inserted"],
            "superseded": self.written["superseded"],
            "merged": self.written["merged"],
            "rejected": dict(sorted(self.rejected.items())),
            "dead": dict(sorted(self.dead.items())),
            "pending": self.pending,
            "unseen": self.unseen,
        }

    def lines(self) -> list[str]:
        def by(c: Counter[str]) -> str:
            inner = ", ".join(f"{k} {v}" for k, v in sorted(c.items()))
            return f"{sum(c.values())}" + (f" ({inner})" if inner else "")

        out = [
            f"  events      {self.events}"
            + (f"  (from {self.items} items)" if self.items != self.events else ""),
            f"  inserted    {self.written['inserted']}",
            f"  superseded  {self.written['superseded']}",
            f"  merged      {self.written['merged']}",
            f"  rejected    {by(self.rejected)}",
            f"  dead        {by(self.dead)}",
        ]
        if self.pending:
            out.append(f"  pending     {self.pending}  (in the inbox; workers will finish them)")
        if self.unseen:
            out.append(f"  not in ledger {self.unseen}  (not sent yet, or still on the broker)")
        return out


def ledger_rows(
    store: Any, items: Sequence[Item], terminal_only: bool = False
) -> list[tuple[Item, dict[str, Any]]]:
    """(item, its row: event_id, status, decision, reason) for the items the ledger holds,
    looked up under their namespace (never another tenant's event of the same id) and, for
    a payload that reused an id, under its own reuse row. Queried in chunks."""
    out: list[tuple[Item, dict[str, Any]]] = []
    for start in range(0, len(items), _LEDGER_CHUNK):
        chunk = items[start : start + _LEDGER_CHUNK]
        keys = [(it.namespace, it.event_id) for it in chunk]
        keys += [(it.namespace, it.ref.reused_id) for it in chunk if it.payload_hash]
        rows = store.ledger_rows(keys)
        by = {(r["ns_key"], r["event_id"]): r for r in rows}
        for it in chunk:
            ref = it.ref
            row = ref.own_row(
                by.get((it.namespace, it.event_id)),
                by.get((it.namespace, ref.reused_id)) if ref.reused_id else None,
            )
            if row is not None and not (terminal_only and row["status"] == "pending"):
                out.append((it, row))
    return out


def summarize(store: Any, items: Sequence[Item]) -> Summary:
    todo = unique(items)
    s = Summary(items=len(items), events=len(todo))
    rows = ledger_rows(store, todo)
    for _, r in rows:
        s.add(r["status"], r["decision"], r["reason"])
    s.unseen = len(todo) - len(rows)
    return s


def stamps(chunk: list[Item], key: bytes | None) -> list[str | None] | None:
    """The scan stamp of each clean, valid event of `chunk` (None for the others), or None
    without a key. The reader scanned every item already (`Item.of`: a payload hash only
    for a valid event where the scan found nothing); the stamp says so to the worker."""
    if key is None:
        return None
    from memsieve import ids
    from memsieve.capture import policy
    from memsieve.delivery import stamp

    out: list[str | None] = []
    for it in chunk:
        made = None
        if it.payload_hash is not None:
            _obj, event, _err = ids.parse(it.payload)
            if event is not None:
                made = stamp.make(key, policy.event_fields(event))
        out.append(made)
    return out if any(out) else None

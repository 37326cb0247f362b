"""Backfills: old retros from JSON lines or Markdown, with deterministic event ids.

Re-sending is idempotent because every item's event id is derived from where it came from
and what it says (the inbox ignores an id it has seen). Resumption uses a small checkpoint
(how many items of the source, in its fixed order, were handed to the broker); progress and
the summary are read from the ledger (the events table), so they stay right across crashes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from memsieve.errors import ConfigError
from memsieve.schemas import events as ev

MARKDOWN = (".md", ".markdown")
JSONL = (".jsonl", ".ndjson")
_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE_RE = re.compile(r"^[ \t]{0,3}(```|~~~)")
_LEDGER_CHUNK = 5000


@dataclass(frozen=True)
class Item:
    """One backfilled event: its id, what is sent, and where it came from (for messages)."""

    event_id: str
    payload: dict[str, Any] | str
    origin: str
    # The ledger's namespace key and this payload's hash (see memsieve.ids.LedgerRef):
    # event ids are per namespace, and a payload that reuses an id has a row of its own.
    namespace: str = ""
    payload_hash: str | None = None

    @classmethod
    def of(cls, payload: dict[str, Any] | str, origin: str) -> Item:
        from memsieve.ids import ledger_ref

        ref = ledger_ref(payload)
        return cls(ref.event_id, payload, origin, ref.namespace, ref.payload_hash)

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.namespace, self.event_id, self.payload_hash)

    @property
    def ref(self) -> Any:
        from memsieve.ids import LedgerRef

        return LedgerRef(self.namespace, self.event_id, self.payload_hash)


def _bf_id(*parts: str) -> str:
    return (
        "bf-" + hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:40]
    )


# -- sources ----------------------------------------------------------------------------
def source_files(root: Path) -> list[Path]:
    """The files a backfill reads, in a fixed order (the order resumption relies on)."""
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise ConfigError(f"no such file or directory: {root}")
    return sorted(
        p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in MARKDOWN + JSONL
    )


def read_source(root: Path, namespace: str | None, kind: str = "retro") -> list[Item]:
    """Every item of a file or folder: JSON lines, or Markdown (one lesson per section)."""
    root = root.resolve()
    items: list[Item] = []
    for path in source_files(root):
        rel = path.name if root.is_file() else path.relative_to(root).as_posix()
        if path.suffix.lower() in MARKDOWN:
            items.extend(_markdown_items(path, rel, namespace, kind))
        else:
            items.extend(_jsonl_items(path, rel, namespace, kind))
    return items


def _jsonl_items(path: Path, rel: str, namespace: str | None, kind: str) -> Iterator[Item]:
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                # Sent as-is: the capture task records it as malformed_json, by its bytes.
                raw = line.rstrip("\n")
                yield Item.of(raw, f"{rel}:{n}")
                continue
            if isinstance(obj, dict):
                if namespace and "namespace" not in obj:
                    obj["namespace"] = namespace
                obj.setdefault("kind", kind)
                if "event_id" not in obj:
                    canon = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
                    obj["event_id"] = _bf_id(str(obj.get("namespace")), rel, canon)
            yield Item.of(obj, f"{rel}:{n}")


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end < 0:
        return {}, text
    try:
        meta = yaml.safe_load(text[4:end]) or {}
    except yaml.YAMLError:
        return {}, text
    rest = text[end + 4 :]
    return (meta if isinstance(meta, dict) else {}), rest.split("\n", 1)[1] if "\n" in rest else ""


def sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) for every heading section; headings inside code fences don't count.

    A section with no body (a file title directly followed by a sub-heading) is no lesson.
    """
    out: list[tuple[str, str]] = []
    heading: str | None = None
    body: list[str] = []
    fence: str | None = None

    def close() -> None:
        content = "\n".join(body).strip("\n").rstrip()
        if heading is not None and content.strip():
            out.append((heading, content))

    for line in text.splitlines():
        m = _FENCE_RE.match(line)
        if m:
            fence = None if fence == m.group(1) else (fence or m.group(1))
        match = _HEADING_RE.match(line) if fence is None else None
        if match:
            close()
            heading, body = match.group(2).strip(), []
        else:
            body.append(line)
    close()
    return out


def _markdown_items(path: Path, rel: str, namespace: str | None, kind: str) -> Iterator[Item]:
    text = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
    meta, text = _front_matter(text)
    ns = str(meta.get("namespace") or namespace or "")
    if not ns:
        raise ConfigError(
            f"{rel}: no namespace (pass --namespace or set namespace: in front matter)"
        )
    when = meta.get("occurred_at") or meta.get("date")
    tags = meta.get("tags") or []
    for heading, content in sections(text):
        event: dict[str, Any] = {
            "event_id": _bf_id(ns, rel, heading, ev.content_hash(heading, content)),
            "namespace": ns,
            "kind": str(meta.get("kind") or kind),
            "heading": heading,
            "content": content,
        }
        if when:
            event["occurred_at"] = str(when)
        if isinstance(tags, list) and tags:
            event["tags"] = [str(t) for t in tags]
        if meta.get("agent") or meta.get("session"):
            event["source"] = {"agent": meta.get("agent"), "session": meta.get("session")}
        yield Item.of(event, f"{rel}#{heading[:60]}")


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
    sql = (
        "SELECT ns_key, event_id, status, decision, reason, payload_hash FROM events"
        " WHERE (ns_key, event_id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))"
    )
    out: list[tuple[Item, dict[str, Any]]] = []
    for start in range(0, len(items), _LEDGER_CHUNK):
        chunk = items[start : start + _LEDGER_CHUNK]
        keys = [(it.namespace, it.event_id) for it in chunk]
        keys += [(it.namespace, it.ref.reused_id) for it in chunk if it.payload_hash]
        rows = store.query(sql, ([k[0] for k in keys], [k[1] for k in keys]))
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

"""Backfill sources: old retros from JSON lines or Markdown, read into items with
deterministic event ids (derived from where each came from and what it says, so that a
re-sent backfill changes nothing: the inbox ignores an id it has seen).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from memsieve.errors import ConfigError
from memsieve.schemas import memory
from memsieve.schemas.events import too_deep

MARKDOWN = (".md", ".markdown")
JSONL = (".jsonl", ".ndjson")
_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE_RE = re.compile(r"^[ \t]{0,3}(```|~~~)")


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


def _encoding(path: Path) -> str:
    """UTF-16 where the file starts with its byte-order mark (Windows tools write it);
    otherwise UTF-8, without a UTF-8 byte-order mark (Notepad's) in the first line."""
    with open(path, "rb") as fh:
        head = fh.read(2)
    return "utf-16" if head in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"


def _jsonl_items(path: Path, rel: str, namespace: str | None, kind: str) -> Iterator[Item]:
    with open(path, encoding=_encoding(path), errors="surrogateescape") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                readable = not too_deep(obj)
            except (ValueError, RecursionError):
                readable = False
            if not readable:
                # Sent as-is: the capture task records it (malformed_json, or invalid_event
                # for a line nested too deep for an event), by its bytes.
                raw = line.rstrip("\n")
                yield Item.of(raw, f"{rel}:{n}")
                continue
            # A line holding a JSON array of events: each one is an event of its own.
            parts = list(enumerate(obj)) if isinstance(obj, list) and obj else [(None, obj)]
            for i, part in parts:
                if isinstance(part, dict):
                    if namespace and "namespace" not in part:
                        part["namespace"] = namespace
                    part.setdefault("kind", kind)
                    if "event_id" not in part:
                        canon = json.dumps(part, sort_keys=True, ensure_ascii=False, default=str)
                        part["event_id"] = _bf_id(str(part.get("namespace")), rel, canon)
                yield Item.of(part, f"{rel}:{n}" if i is None else f"{rel}:{n}[{i}]")


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
    try:
        text = path.read_text(encoding=_encoding(path)).replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        # Not replaced by U+FFFD behind the user's back (enqueue and write refuse such
        # bytes too): nothing is sent until the file is converted.
        raise ConfigError(
            f"{rel}: not valid UTF-8 (byte {exc.start}); convert it first, e.g. "
            f"`iconv -f latin1 -t utf-8`"
        ) from None
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
            "event_id": _bf_id(ns, rel, heading, memory.content_hash(heading, content)),
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

"""The capture event contract: what producers put on the queue.

Pure: no I/O. `CaptureEvent.model_json_schema()` is exported to
`schemas/capture_event.schema.json` for producers in other languages.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from memsieve.schemas.memory import memory_text
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

# Bounds are deliberately generous for lessons and hard for abuse: a lesson is a
# paragraph, not a document. The policy may set tighter per-namespace limits.
MAX_HEADING = 300
MAX_CONTENT = 20_000
MAX_TAGS = 32
NAMESPACE_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")
EVENT_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
TAG_RE = re.compile(r"^[^\x00-\x1f\x7f,]{1,64}$")
# occurred_at, once in UTC, must stay inside what Python and PostgreSQL both load back in
# any session time zone (a day inside years 1..9999 on each side).
OCCURRED_MIN = datetime(1, 1, 2, tzinfo=UTC)
OCCURRED_MAX = datetime(9999, 12, 30, tzinfo=UTC)


class Kind(StrEnum):
    retro = "retro"
    correction = "correction"
    failure = "failure"
    pattern = "pattern"


def _no_nul(value: str, field: str) -> str:
    if "\x00" in value:
        raise ValueError(f"{field} contains a NUL byte")
    # Lone surrogates come from invalid UTF-8 decoded with surrogateescape or
    # from JSON "\ud800"; Postgres cannot store them.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{field} is not valid Unicode") from None
    return value


# A capture event is an object of strings, a list of tags and one small object (`source`):
# nothing a producer means nests past a few levels. A deeper item is not passed on: Celery
# pickles a task's arguments for its pool process, and a few hundred levels overflow that
# (the message stayed unacked and took a pool slot for good: the worker stalled, and the
# events beside the deep one were lost on the next restart).
MAX_EVENT_DEPTH = 32


def too_deep(value: Any, limit: int = MAX_EVENT_DEPTH) -> bool:
    """Whether decoded JSON `value` nests more than `limit` containers deep (iteratively:
    no recursion, whatever the depth)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


# Letters that render as nothing (Hangul fillers, the braille blank), beside the format,
# control and separator categories: a text of these alone says nothing.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def _visible(c: str) -> bool:
    return not c.isspace() and c not in _BLANK_LETTERS and unicodedata.category(c)[0] not in "CZ"


class Source(BaseModel):
    """Where the event came from."""

    model_config = ConfigDict(extra="forbid")
    agent: str | None = Field(default=None, max_length=128)
    session: str | None = Field(default=None, max_length=128)

    @field_validator("agent", "session")
    @classmethod
    def _text(cls, v: str | None, info: Any) -> str | None:
        # "" says no more than null: one payload (and one derived id) for both.
        return None if not v else _no_nul(v, f"source.{info.field_name}")


class CaptureEvent(BaseModel):
    """One lesson an agent wants to remember."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    event_id: str | None = Field(
        default=None,
        description="Idempotency key chosen by the producer; derived from the content when absent.",
        json_schema_extra={"pattern": EVENT_ID_RE.pattern},
    )
    namespace: str = Field(
        description="Project or tenant; memories never cross namespaces.",
        json_schema_extra={"pattern": NAMESPACE_RE.pattern},
    )
    kind: Kind
    heading: str = Field(max_length=MAX_HEADING)
    content: str = Field(max_length=MAX_CONTENT)
    tags: list[str] = Field(
        default_factory=list,
        max_length=MAX_TAGS,
        json_schema_extra={"items": {"type": "string", "pattern": TAG_RE.pattern}},
    )
    occurred_at: datetime | None = None
    source: Source = Field(default_factory=Source)
    reasoning: bool = Field(
        default=False,
        strict=True,  # true or false: "yes" or 1 is no answer a producer meant
        description="Producer marks intermediate reasoning; the policy refuses it.",
    )
    supersedes: str | None = Field(
        default=None,
        max_length=64,
        description=(
            "For a correction: the id (a UUID) of the memory it explicitly replaces, in the"
            " same namespace. One already superseded is resolved to its live successor."
        ),
    )

    @field_validator("event_id")
    @classmethod
    def _event_id(cls, v: str | None) -> str | None:
        if v is not None and not EVENT_ID_RE.match(v):
            raise ValueError("event_id must be 1-128 chars of [A-Za-z0-9._:-]")
        return v

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, v: str) -> str:
        if not NAMESPACE_RE.match(v):
            raise ValueError("namespace must match ^[a-z0-9][a-z0-9._-]{0,62}$")
        return v

    @field_validator("heading", "content")
    @classmethod
    def _text(cls, v: str, info: Any) -> str:
        _no_nul(v, info.field_name)
        if not v.strip():
            raise ValueError(f"{info.field_name} is empty")
        if not any(_visible(c) for c in v):
            raise ValueError(f"{info.field_name} has no visible character")
        return v

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: list[str]) -> list[str]:
        for tag in v:
            _no_nul(tag, "tags")
            if not TAG_RE.match(tag):
                raise ValueError("each tag must be 1-64 printable chars without commas")
        return v

    @field_validator("occurred_at", mode="before")
    @classmethod
    def _occurred_at_text(cls, v: Any) -> Any:
        # A number read as seconds since 1970 (pydantic's lax mode) is a guess: the schema
        # says an ISO 8601 date-time.
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            raise ValueError("occurred_at must be an ISO 8601 date-time string")
        return v

    @field_validator("occurred_at")
    @classmethod
    def _occurred_at(cls, v: datetime | None) -> datetime | None:
        if v is None:
            return None
        if v.tzinfo is None:
            v = v.replace(tzinfo=UTC)
        try:
            v = v.astimezone(UTC)
        except (OverflowError, ValueError):
            v = None  # type: ignore[assignment]
        if v is None or not OCCURRED_MIN <= v <= OCCURRED_MAX:
            raise ValueError("occurred_at must be between 0001-01-02 and 9999-12-30 in UTC")
        return v

    @field_validator("supersedes")
    @classmethod
    def _supersedes(cls, v: str | None) -> str | None:
        if v is None:
            return None
        _no_nul(v, "supersedes")
        try:
            return str(uuid.UUID(v))
        except ValueError:
            raise ValueError("supersedes must be a memory id (a UUID)") from None

    @property
    def text(self) -> str:
        """Heading and content as embedded and hashed."""
        return memory_text(self.heading, self.content)

    @model_validator(mode="after")
    def _not_a_derived_id(self) -> CaptureEvent:
        # The shapes of the ids memsieve derives are its own: an event that named itself
        # `h-<hash>` of another lesson made that lesson `event_id_reused` (a probe). Only
        # its own derived id (an event sent again, its id spelled out) is accepted.
        if self.event_id and RESERVED_ID.match(self.event_id):
            own = self.model_copy(update={"event_id": None}).resolved_id()
            if self.event_id != own:
                raise ValueError(
                    "event_id has the shape of an id memsieve derives (h-, raw-, s-, reused- and"
                    " 40 hex digits): choose another or leave it out"
                )
        return self

    def resolved_id(self) -> str:
        """The producer's event_id, else one derived from what the event says and when.

        Identity is the content plus when and where it occurred: a redelivered message
        maps to the same id (idempotent), while the same lesson captured again later is
        a new event (which the gate then merges into the existing memory).
        """
        if self.event_id:
            return self.event_id
        when = self.occurred_at.isoformat() if self.occurred_at else ""
        parts = [
            self.namespace,
            self.kind.value,
            self.heading,
            self.content,
            when,
            self.source.agent or "",
            self.source.session or "",
        ]
        # Every other field that changes what the event means; left out at its default so
        # that the ids of plain events stay what they were.
        if self.tags or self.reasoning or self.supersedes:
            parts += ["\x1e".join(self.tags), "r" if self.reasoning else "", self.supersedes or ""]
        return derive_event_id(*parts)


RESERVED_ID = re.compile(r"(?:h|raw|s|reused)-[0-9a-f]{40}$")


def derive_event_id(*parts: str) -> str:
    h = hashlib.sha256("\x1f".join(parts).encode("utf-8"))
    return "h-" + h.hexdigest()[:40]


def raw_event_id(raw: bytes) -> str:
    """Id for input that is not a valid event: derived from its bytes."""
    return "raw-" + hashlib.sha256(raw).hexdigest()[:40]


def first_error(exc: ValidationError) -> str:
    """A short exact message for the first validation error, e.g. 'kind: unknown kind'."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "event"
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    ctx = err.get("ctx") or {}
    if err["type"] == "enum":
        msg = "must be one of retro, correction, failure, pattern"
    elif err["type"] == "string_unicode":
        msg = f"{loc} is not valid Unicode"
    elif err["type"] == "too_long" and "max_length" in ctx:
        unit = "characters" if isinstance(err.get("input"), str) else "items"
        msg = f"at most {ctx['max_length']} {unit} allowed"
    if err["type"] == "extra_forbidden":
        msg = "unknown field"
        # A field name is producer input: echo it only when it looks like a name (and the
        # object it is in: `source.host`), else name the object that holds it.
        parts = [str(p) for p in err["loc"]]
        while parts and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,40}", parts[-1]):
            parts.pop()
        loc = ".".join(parts) or "event"
    return f"{loc}: {msg}"

"""Event ids: what the ledger records for a raw item, computable by a producer.

Light on purpose (the schema, the secret scanner and the policy's field list, no store,
broker or embedder): `memsieve enqueue`, the backfill reader and the consumer's message
summary compute ids here without importing the pipeline.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memsieve.capture import policy, secrets
from memsieve.schemas import events as ev
from pydantic import ValidationError


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, default=str, ensure_ascii=False).encode(
        "utf-8", "surrogatepass"
    )


def raw_bytes(raw: Any) -> bytes:
    if isinstance(raw, bytes):
        return raw
    if isinstance(raw, str):
        return raw.encode("utf-8", "surrogatepass")
    try:
        return canonical(raw)
    except (TypeError, ValueError):
        return repr(raw).encode("utf-8", "backslashreplace")


def given_event_id(raw: Any) -> str | None:
    if isinstance(raw, dict):
        eid = raw.get("event_id")
        # Never one of the shapes memsieve derives: an invalid item recorded under another
        # lesson's derived id would take that lesson's ledger key.
        if isinstance(eid, str) and ev.EVENT_ID_RE.match(eid) and not ev.RESERVED_ID.match(eid):
            return eid
    return None


def given_namespace(raw: Any) -> str | None:
    if isinstance(raw, dict):
        ns = raw.get("namespace")
        if isinstance(ns, str) and _clean_namespace(ns):
            return ns
    return None


# A message names a few namespaces hundreds of times (the consumer's summary of every
# message, enqueue's of every chunk): each is checked once per process.
@lru_cache(maxsize=4096)
def _clean_namespace(ns: str) -> bool:
    return bool(ev.NAMESPACE_RE.match(ns)) and not secrets.find_secrets(ns)


def default_key() -> bytes:
    """The install key of the current settings. Callers ask for it only when a keyed id is
    needed (an item holding a secret): the consumer's summary of a clean message used to
    rebuild Settings for it on every message. The pipeline reads its key once and passes it."""
    from memsieve.ops import home
    from memsieve.settings import Settings

    return home.install_key(Settings.from_env().key_path)


def ledger_id(
    event: ev.CaptureEvent, obj: Any, key: bytes | None = None, verdict: Any = None
) -> str:
    """The id the ledger records for a valid event.

    Its own or derived id, unless that would leak a secret: an id that is itself a
    secret, or one derived (by an unkeyed hash) from text holding one, is replaced by a
    keyed digest (`s-…`) of the raw event or of the derived id. `key` None: the install
    key of this process's settings, read only when a keyed id is needed.
    """
    where = (
        verdict.secret_fields
        if verdict is not None
        else tuple(n.split("[")[0] for n in secrets.scan_fields(policy.event_fields(event)))
    )
    if not where:
        return event.resolved_id()
    if event.event_id and "event_id" not in where:
        return event.event_id
    if event.event_id:
        return secrets.keyed_id(key or default_key(), canonical(obj))
    return secrets.keyed_id(key or default_key(), event.resolved_id().encode())


def decode(raw: Any) -> tuple[Any, tuple[str, str] | None]:
    """(object, None) for an item that validates as an event, else (object, (reason, detail))."""
    obj, _event, err = parse(raw)
    return obj, err


def parse(raw: Any) -> tuple[Any, ev.CaptureEvent | None, tuple[str, str] | None]:
    """`decode`, keeping the validated event: (object, event, None) or (object, None, error)."""
    obj = raw
    if isinstance(raw, bytes):
        try:
            obj = json.loads(raw)
        except RecursionError:
            return None, None, ("invalid_event", "event: nested too deeply")
        except (ValueError, UnicodeDecodeError):
            return None, None, ("malformed_json", "bytes that are not valid JSON")
    elif isinstance(raw, str):
        # A string argument arrived as valid JSON; it is an event only if it is itself the
        # JSON text of one (a producer that encoded twice).
        try:
            obj = json.loads(raw)
        except RecursionError:
            return raw, None, ("invalid_event", "event: nested too deeply")
        except ValueError:
            return (
                raw,
                None,
                (
                    "malformed_json",
                    "expected a JSON object, got a string whose text is not JSON",
                ),
            )
        if not isinstance(obj, dict):
            return raw, None, ("not_an_event", "expected a JSON object, got a string")
    if not isinstance(obj, dict):
        return obj, None, ("not_an_event", f"expected a JSON object, got {_json_type(obj)}")
    try:
        return obj, ev.CaptureEvent.model_validate(obj), None
    except ValidationError as exc:
        return obj, None, ("invalid_event", ev.first_error(exc))
    except RecursionError:
        return obj, None, ("invalid_event", "event: nested too deeply")


def _json_type(obj: Any) -> str:
    if obj is None:
        return "null"
    if isinstance(obj, bool):
        return "a boolean"
    if isinstance(obj, (int, float)):
        return "a number"
    if isinstance(obj, (list, tuple)):
        return "an array"
    return "a value of another type"


def event_id_for(raw: Any, key: bytes | None = None) -> str:
    """The event id the ledger records for a raw item (producers can compute it too,
    except for events refused for a secret, whose ids are keyed).

    A valid event: see `ledger_id`. Anything else: its `event_id` field if that is
    well-formed and no secret, else an id derived from its raw bytes (keyed when the
    bytes hold a secret: an unkeyed hash of a short message is a guessable one).
    """
    obj, event, _err = parse(raw)
    if event is not None:
        return ledger_id(event, obj, key)
    return invalid_item_id(raw, obj, key)


def invalid_item_id(raw: Any, obj: Any, key: bytes | None = None) -> str:
    """The id of an item that is not a valid event (`obj`: its decoded form)."""
    given = given_event_id(obj)
    if given and not secrets.find_secrets(given):
        return given
    data = raw_bytes(raw)
    if given or secrets.find_secrets(data.decode("utf-8", "replace")):
        return secrets.keyed_id(key or default_key(), data)
    return ev.raw_event_id(data)


def reused_event_id(event_id: str, payload_hash: str) -> str:
    """The ledger id of a payload that reused `event_id` of another payload (its own row)."""
    return ev.derive_event_id("reused", event_id, payload_hash).replace("h-", "reused-", 1)


def payload_hash(event: ev.CaptureEvent) -> str:
    """sha256 of the validated event's canonical JSON: the same payload, the same hash."""
    return hashlib.sha256(canonical(event.model_dump(mode="json"))).hexdigest()


@dataclass(frozen=True)
class LedgerRef:
    """Where the ledger records one raw item: its namespace key ('' for rows refused before a
    namespace could be read), its event id, and its payload hash when a producer can know it
    (None for an invalid item or one holding a secret: their hashes are keyed fingerprints).
    Ids are per namespace; a payload that reuses an id is recorded under `reused_id`."""

    namespace: str
    event_id: str
    payload_hash: str | None

    @property
    def reused_id(self) -> str | None:
        if self.payload_hash is None:
            return None
        return reused_event_id(self.event_id, self.payload_hash)

    def own_row(
        self, original: dict[str, Any] | None, reused: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        """This item's row, given the ledger rows under its id and under its reused id: the
        reused row if there is one; the original only if it holds this payload (a reuse
        not yet recorded is not this item's outcome)."""
        if reused is not None:
            return reused
        if original is not None and (
            self.payload_hash is None
            or original.get("payload_hash") == self.payload_hash
            or original.get("reason") == "secret"  # its hash is a keyed fingerprint
        ):
            return original
        return None


@dataclass(frozen=True)
class _Scanned:
    secret_fields: tuple[str, ...]


def ledger_ref(raw: Any, key: bytes | None = None) -> LedgerRef:
    """The ledger's key for a raw item, as `Pipeline.parse` will record it."""
    obj, event, _err = parse(raw)
    if event is None:
        return LedgerRef(given_namespace(obj) or "", invalid_item_id(raw, obj, key), None)
    found = tuple(n.split("[")[0] for n in secrets.scan_fields(policy.event_fields(event)))
    if found:
        eid = ledger_id(event, obj, key, _Scanned(found))
        return LedgerRef("" if "namespace" in found else event.namespace, eid, None)
    return LedgerRef(event.namespace, event.resolved_id(), payload_hash(event))


def describe_payload(payload: Any) -> str:
    """Counts, namespaces and the first event id of a capture payload; no text."""
    items = payload if isinstance(payload, list) else [payload]
    # Only well-formed namespaces that hold no secret: anything else is producer text.
    namespaces = sorted({ns for ns in map(given_namespace, items) if ns})
    ns = ",".join(namespaces)[:80]
    first = event_id_for(items[0]) if items else "-"
    return f"[{len(items)} event(s) ns={ns} first={first}]"

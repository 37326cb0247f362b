"""Scan stamps: a trusted producer's keyed word that it has scanned an event for secrets.

`memsieve enqueue` and `CaptureClient` run the worker's own secret scanner on every event
before it is sent, and send only clean events. Scanning each event again in the worker
doubled the capture path's CPU. When the producer holds the install key (the same
`MEMSIEVE_KEY_FILE`), it sends, beside each clean event, a stamp:

    HMAC-SHA256(stamp key, [scanner version, [[field, value], ...]])

over the exact field values `policy.event_fields` gives the scanner (heading, content,
each tag, source, event id, supersedes, namespace), in the message header `HEADER` (one
stamp or null per event of the message). The worker computes the same HMAC over the
fields of the event *it* validated; only when the two are equal does it skip its own
secret scan of that event (the rest of the policy still runs). Anything else scans in
full: no stamp, a stamp for other values (a field changed after stamping), a forged or
malformed stamp, a stamp from another scanner version, a worker without the key.

- **The stamp key** is derived from the install key with a label no other use of that
  key signs (fingerprints sign event text; keyed ids sign raw items that hold a secret),
  so a stamp tells nothing about fingerprints or ids, and back.
- **The scanner version** is a digest of the scanner's own source files and of
  detect-secrets' version: a producer running another scanner than the worker gets its
  events scanned again, whoever forgot to bump what.
- **Nothing secret in it**: a stamp is only made for an event the scan found clean, and
  is an HMAC: 64 hex characters that say nothing about the values without the key.

A stamp proves who scanned, not that the event is harmless to replay: replaying a stamped
event gives the worker the same clean event again, which the ledger deduplicates.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

HEADER = "memsieve_scan_stamps"
_LABEL = b"\x00memsieve/scan-stamp/v1\x00"
_STAMP_RE = re.compile(r"^[0-9a-f]{64}$")


@cache
def scanner_version() -> str | None:
    """A digest of the scanner's source and of detect-secrets' version; None when the
    source cannot be read (then nothing is stamped and every event is scanned)."""
    from detect_secrets.__version__ import VERSION

    h = hashlib.sha256(f"detect-secrets {VERSION}\n".encode())
    try:
        for path in scanner_files():
            h.update(path.stem.encode() + b"\n" + path.read_bytes())
    except OSError:
        return None
    return h.hexdigest()[:32]


def scanner_files() -> list[Path]:
    """Every module of `memsieve.capture`: the scan and the policy that reads its fields.
    All of them, not a list to keep up to date (one kept by hand had missed two modules
    that decide what the scan finds)."""
    from memsieve import capture

    return sorted(Path(capture.__file__).parent.glob("*.py"))


@cache
def stamp_key(install_key: bytes) -> bytes:
    """The key stamps are made with, derived from the install key."""
    return hmac.new(install_key, _LABEL, hashlib.sha256).digest()


def install_key_if_present(key_file: Path) -> bytes | None:
    """The install key in `key_file`, if that file exists and can be read; None otherwise
    (nothing is stamped, the worker scans). Never creates the key: a producer on another
    machine has no business minting one."""
    from memsieve.errors import ConfigError
    from memsieve.ops import home

    try:
        return home.install_key(key_file) if key_file.is_file() else None
    except (ConfigError, OSError):
        return None


def producer_key(key_file: Path) -> bytes | None:
    """The stamp key of the install whose key file is `key_file` (`install_key_if_present`)."""
    key = install_key_if_present(key_file)
    return stamp_key(key) if key else None


def _message(version: str, fields: Sequence[tuple[str, str]]) -> bytes:
    # JSON with ASCII escapes: unambiguous for any value (NUL, lone surrogates included).
    return json.dumps([version, [list(f) for f in fields]], ensure_ascii=True).encode("ascii")


def make(key: bytes | None, fields: Sequence[tuple[str, str]]) -> str | None:
    """The stamp of a clean event's scanned `fields` under `key` (a `stamp_key`); None
    without a key or a scanner version."""
    version = scanner_version()
    if key is None or version is None:
        return None
    return hmac.new(key, _message(version, fields), hashlib.sha256).hexdigest()


def verifies(key: bytes | None, fields: Sequence[tuple[str, str]], given: Any) -> bool:
    """Whether `given` is the stamp of exactly these `fields` under `key`, by this scanner."""
    if key is None or not isinstance(given, str) or not _STAMP_RE.match(given):
        return False
    want = make(key, fields)
    return want is not None and hmac.compare_digest(want, given)


def header_value(value: Any, count: int) -> list[str | None] | None:
    """The stamps a message header carries for its `count` events, or None: a list of that
    length whose items are well-formed stamps or null (anything else is dropped whole)."""
    if not isinstance(value, list) or len(value) != count:
        return None
    if not all(v is None or (isinstance(v, str) and _STAMP_RE.match(v)) for v in value):
        return None
    return value

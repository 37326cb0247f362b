"""What looks random in a lesson but is no secret: ids, digests, public key material and
documentation values. The scanner drops a generic finding that is one of these. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from memsieve.capture import patterns
from memsieve.capture.shapes import SecretFinding

# `sha256_…`, `commit-…`, `trace-…`, `ch_…`: a prefix that names an id or a digest.
DIGEST_PREFIX = re.compile(
    r"(?i)^(?:sha\d*|md5|hash|digest|commit|rev|id|uuid|etag|h|raw|bf|s"
    # request, trace and job ids
    r"|trace|span|req|request|corr|correlation|run|build|job|pod|container|"
    # Stripe object ids (its keys are sk_/rk_/whsec_)
    r"ch|cus|pi|sub|price|prod|evt|txn|py|src|card|pm|seti|acct)[_-]"
)

# Public key material: PEM blocks that hold no private key, and OpenSSH public key lines.
_PUBLIC_BLOCK = re.compile(
    r"-----BEGIN (?:(?:NEW |TRUSTED )?CERTIFICATE(?: REQUEST)?|X509 CRL|PKCS7|"
    r"(?:[A-Z0-9]+ )*PUBLIC KEY(?: BLOCK)?)-----.*?"
    r"(?:-----END [A-Z0-9 ]+-----|$)",
    re.S,
)
_PUBLIC_KEY_LINE = re.compile(
    r"(?:(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d+)(?:-cert-v01@openssh\.com)?"
    r"|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)\s+AAAA[A-Za-z0-9+/]+=*"
)
# A digest says what it is: `SHA256:wVZe…` (ssh fingerprints), `h1:4dxW…=` (go.sum),
# `sha512-…` (npm integrity).
_DIGEST_LABEL = re.compile(r"(?i)(?:sha(?:1|224|256|384|512)?|md5|h1)[:=-]$")
# Ids: ULIDs and UUIDs behind optional short prefixes (`evt-01J5…`, `sess-…`, `mem_…`).
_ID = re.compile(
    r"(?:[a-z][a-z0-9]{0,11}[_-])*"
    r"(?:[0-7][0-9A-HJKMNP-TV-Z]{25}"
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
)
# A value named as an id: "request id 4F2A…", "x-amz-id-2 hhp0…", "trace_id=…".
_ID_LABEL = re.compile(r"(?i)(?<![a-z])(?:[a-z]+[ _-])?id(?:-\d)?\s*[:=]?\s*[\"'`(]?$")
# What documentation puts where a real value would go: AWS's `…EXAMPLE` keys and runs of
# one repeated character (`T00000000/B00000000/XXXXXXXX…`).
_DOC_EXAMPLE = re.compile(r"EXAMPLE|([0Xx*])\1{7,}")


# Kinds whose value, if base64 of plain text (a JWT's header, a config file), is no secret
# itself: the decoded text is scanned instead.
_DECODABLE = ("high_entropy_token", "high_entropy_string", "credential_value")


def _decodes_to_text(run: str, b64: Callable[[str], str | None]) -> bool:
    """A base64 run whose bytes are ordinary text: its decoded text is scanned instead."""
    decoded = b64(run)
    if decoded is None or len(decoded) < 8:
        return False
    if decoded.isprintable():
        return True
    # A config file's lines (`[loggers]\nkeys=root`) are text too, and so is a public PEM
    # block; lines of more base64 (a key encoded twice) are not: each line alone decodes
    # to a fragment that no format names.
    flat = decoded.replace("\n", " ").replace("\r", " ").replace("\t", " ")
    return flat.isprintable() and (
        not _LONG_RUN.search(decoded) or _PUBLIC_BLOCK.match(decoded.lstrip()) is not None
    )


_LONG_RUN = re.compile(r"[A-Za-z0-9+/=_-]{40}")


def public_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` holds public key material (PEM public blocks, ssh public key lines)."""
    if "-----BEGIN" not in text and "AAAA" not in text:
        return []
    return [m.span() for public in (_PUBLIC_BLOCK, _PUBLIC_KEY_LINE) for m in public.finditer(text)]


def public_or_id(
    text: str,
    f: SecretFinding,
    b64: Callable[[str], str | None],
    public: Sequence[tuple[int, int]],
) -> bool:
    """A generic or documentation finding that is really an id, a digest, public key
    material (inside one of the `public` spans of `public_spans`) or a placeholder (`b64`
    decodes a base64 run to text, or None)."""
    value = text[f.start : f.end]
    if _DOC_EXAMPLE.search(value):
        return True
    if f.kind == "private_key":
        # A private-key header named in prose, with no key material after it.
        return "-----" not in value and len(value) < 64
    if f.kind not in patterns.GENERIC_KINDS or f.kind == "prose_password":
        return False
    before = text[max(0, f.start - 16) : f.start]
    if _ID.fullmatch(value) or _DIGEST_LABEL.search(before[-7:]) or _ID_LABEL.search(before):
        return True
    if DIGEST_PREFIX.match(value):
        return True
    if f.kind in _DECODABLE and _decodes_to_text(value, b64):
        return True
    return any(start <= f.start and f.end <= end for start, end in public)

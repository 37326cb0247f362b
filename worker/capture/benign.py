"""Spans of a lesson that hold no secret by construction. Pure.

A pasted config or log is full of values that look random and are safe to keep: text
encrypted at rest (sops' `ENC[...]`, Ansible Vault, Vault transit, KMS blobs, sealed
secrets), references to a secret rather than the secret (ARNs, `${VAR:?unset}`),
public key material named as such (`PublicKey = …`, a JWK's `n` / `e` / `x` / `y`),
content addresses (IPFS CIDs, hashed known_hosts entries) and signatures of one payload
(`X-Signature-256: sha256=…`). The scanner drops a finding that lies wholly inside one.

Only values that need no key to be harmless are here: a bcrypt hash or a webhook's secret
is no placeholder, and stays a finding.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memsieve.capture.shapes import URL_USERINFO, SecretFinding, not_placeholder

Span = tuple[int, int]

# Encrypted at rest: the ciphertext is useless without a key held elsewhere.
_SOPS = re.compile(r"ENC\[[A-Z0-9_]+,data:[^\]\s]*\]")
_ANSIBLE_VAULT = re.compile(
    r"(?:!vault\s*\|?\s*)?\$ANSIBLE_VAULT;\d\.\d;[A-Z0-9]+(?:;[\w-]+)?(?:\s+[0-9a-f]{8,})+"
)
_VAULT_TRANSIT = re.compile(r"\bvault:v\d+:[A-Za-z0-9+/]{16,}={0,2}")
# A Bitnami sealed secret's value under `encryptedData` (`Ag…`, hundreds of characters).
_SEALED = re.compile(
    r"(?i)encryptedData(?:\.[\w.-]+)?[\"']?\s*:\s*(?:\n\s+[\w.-]+:\s*)?[\"']?(Ag[A-Za-z0-9+/]{200,}={0,2})"
)
# An AWS KMS ciphertext blob starts with the bytes 01 02 02 00 78 ("AQICAH" in base64).
_KMS_BLOB = re.compile(r"(?<![A-Za-z0-9+/])AQICAH[A-Za-z0-9+/]{100,}={0,2}")

# A reference to a secret, never its value.
_ARN = re.compile(r"\barn:aws[\w-]*:[\w-]+:[\w-]*:\d{12}:[^\s\"'`,)\]}]+")
# `${VAR}`, `${VAR:?message}`, `${VAR:+alt}`, `${VAR:-}`; GitHub's `${{ secrets.X }}`.
# A default (`${VAR:-value}`) is a value: it stays scanned.
_PARAM = re.compile(r"\$\{[A-Za-z_]\w*(?::?[?+][^}\n]*|:?[-=])?(?:\}|$)|\$\{\{[^{}\n]*\}\}")
# What a template or a doc puts where the value goes: `<ask #team-integrations>`, `<senha>`,
# `[MASKED]` (no digit inside: a token in brackets is still a token).
_STAND_IN = re.compile(
    r"<[A-Za-z_#@][^<>\n\d]{0,60}>|\[(?:MASKED|REDACTED|FILTERED|HIDDEN|SECRET)\]"
)

# Public key material named as such.
_PUBLIC_NAMED = re.compile(
    r"(?i)(?:public[_ -]?key|pub[_-]?key|publickey|peer[_ -]?public)[\"']?\s*[:=]\s*[\"']?"
    r"([A-Za-z0-9+/_-]{20,}={0,2})"
)
# A JSON Web Key's public members (`n`, `e`, `x`, `y`, `x5c`), in a text that holds a JWK.
_JWK_PUBLIC = re.compile(r"\"(?:n|e|x|y|kid|x5t|x5t#S256)\"\s*:\s*\"([A-Za-z0-9_-]{2,})\"")
# Values vendors publish in their documentation, tied to no account: the jwt.io sample
# token, Stripe's API-reference test key (AWS's `…EXAMPLE` keys are named by their words:
# memsieve.capture.lookalikes).
PUBLISHED = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
    "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "pk_test_TYooMQauvdEDq54NiTphI7jx",
)
# HPKP / certificate pins, webhook signatures of one payload: digests, named as such.
_PIN = re.compile(r"(?i)\bpin-sha256\s*=\s*[\"']?([A-Za-z0-9+/]{43}=)")
_SIGNATURE = re.compile(r"(?i)\bsha(?:1|256|512)=[0-9a-f]{40,128}\b")
# A connection URL whose password is a stand-in (`postgresql://USER:PASSWORD@HOST:5432/DB`,
# `mongodb+srv://<user>:<pass>@…`): the whole URL is documentation.
_URL_CRED = re.compile(URL_USERINFO + r"[^\s`'\"<>)\]]*")

# Content addresses: IPFS CIDs (v1 base32, v0 base58), hashed known_hosts entries.
_CID = re.compile(r"(?:\bipfs:)?(?://)?\b(?:bafy[a-z2-7]{50,}|Qm[1-9A-HJ-NP-Za-km-z]{44})\b")
_KNOWN_HOSTS = re.compile(r"\|1\|[A-Za-z0-9+/]{27}=\|[A-Za-z0-9+/]{27}=")
# Public by design: age recipients (`age1…`; their secret keys are AGE-SECRET-KEY-1…) and
# Bitcoin bech32 addresses (`bc1…`, `tb1…`).
_BECH32 = re.compile(r"\b(?:age1[02-9ac-hj-np-z]{58}|(?:bc|tb)1[02-9ac-hj-np-z]{25,87})\b")

_ALL = (
    _SOPS, _ANSIBLE_VAULT, _VAULT_TRANSIT, _KMS_BLOB, _ARN, _PARAM, _STAND_IN, _SIGNATURE, _CID,
    _KNOWN_HOSTS, _BECH32,
)  # fmt: skip
_GROUPED = (_SEALED, _PUBLIC_NAMED, _PIN)
# Cheap literals: a text with none of them has no benign span.
_CUES = ("ENC[", "$ANSIBLE_VAULT", "vault:v", "AQICAH", "arn:", "${", "ncryptedData",
         "ublic", "ubkey", "\"kty\"", "in-sha256", "sha1=", "sha256=", "sha512=", "bafy",
         "Qm", "|1|", "<", "[", "://", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "_test_", "age1", "bc1", "tb1")  # fmt: skip


def spans(text: str) -> list[Span]:
    """Where `text` holds values that are no secret by construction (module docstring)."""
    if not any(cue in text for cue in _CUES):
        return []
    out: list[Span] = [m.span() for rx in _ALL for m in rx.finditer(text)]
    out += [m.span(1) for rx in _GROUPED for m in rx.finditer(text)]
    if "://" in text:
        out += [m.span() for m in _URL_CRED.finditer(text) if not not_placeholder(m.group(1))]
    for value in PUBLISHED:
        at = text.find(value)
        while at != -1:
            out.append((at, at + len(value)))
            at = text.find(value, at + 1)
    if '"kty"' in text:
        out += [m.span(1) for m in _JWK_PUBLIC.finditer(text)]
    return [s for s in out if s[1] > s[0]]


def inside(f: SecretFinding, benign: Iterable[Span]) -> bool:
    """The finding lies wholly inside one of the benign spans."""
    return any(start <= f.start and f.end <= end for start, end in benign)

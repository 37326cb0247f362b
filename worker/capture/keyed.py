"""Hex and UUID-shaped keys that their sentence or table row names as credentials. Pure.

Many vendors issue keys that look like ids or digests: 32 hex characters (Datadog,
Algolia, Twilio), UUIDs (Heroku, Bugsnag, Opsgenie), hex in groups (Mailgun's
`…-7c2da3af-1e7db50d`). Bare, they are indistinguishable from commit hashes and request
ids, which lessons are full of, so the generic rules leave them alone. Quoted in a sentence
that talks about a credential ("The key it was using was 'c2cafc11-…'", "the value in the
old .env was '18e07c…'"), or in a table row beside a credential's variable name
(`| JENKINS_API_TOKEN | 11be5116… |`), they are keys; so is the default of a Terraform
variable named as a credential, and a JSON array of 64 bytes (a keypair file). A sentence that says what kind of id
or digest it holds (commit, request id, checksum, idempotency key …) keeps them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memsieve.capture.shapes import SecretFinding, not_placeholder

_HEXKEY = r"[0-9a-fA-F]{32,}(?:-[0-9a-fA-F]{6,}){0,3}"
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_QUOTED = re.compile(rf"([\"'`])({_HEXKEY}|{_UUID})\1")
_CREDENTIAL = re.compile(
    r"(?i)(?:\bapi[ _-]?key|\baccess[ _-]?key|\bsecret|\btoken|\bpassword|\bcredential"
    r"|\bauth|\.env\b|\bthe (?:old |new |same )?key\b|\bkey it\b)"
)
_ID_OR_DIGEST = re.compile(
    r"(?i)\b(?:ids?|sha\d*|hash(?:es)?|commits?|digest|checksum|uuid|request|trace|etag|"
    r"revision|fingerprint|build|version|idempoten\w*|cache|object|partition|row|primary|"
    r"public|session id|correlation|license|run|job|pipeline|ticket|incident|event)\b"
)
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")
_TABLE_ROW = re.compile(r"^[ \t]*\|.*\|[ \t]*$", re.M)
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASS|PWD)[A-Z0-9_]*")
_CELL_VALUE = re.compile(rf"`?({_HEXKEY}|{_UUID}|[A-Za-z0-9+/_=-]{{24,}})`?")


# A Terraform variable named as a credential, with a default: the default is its value.
_HCL_DEFAULT = re.compile(
    r"(?i)variable\s+\"[\w-]*(?:token|secret|password|passwd|api_?key|credential)[\w-]*\"\s*\{"
    r"[^{}]{0,400}?\bdefault\s*=\s*\"([^\"\n]{6,})\""
)


# A keypair file as Solana and others write it: a JSON array of 64 bytes (the secret key).
_BYTE_ARRAY = re.compile(r"\[\s*(?:\d{1,3}\s*,\s*){63}\d{1,3}\s*\]")


def findings(text: str) -> Iterable[SecretFinding]:
    if "[" in text:
        for m in _BYTE_ARRAY.finditer(text):
            if all(int(n) < 256 for n in re.findall(r"\d+", m.group(0))):
                yield SecretFinding(m.start(), m.end(), "private_key_bytes")
    if "variable" in text and "default" in text:
        for m in _HCL_DEFAULT.finditer(text):
            if not_placeholder(m.group(1)):
                yield SecretFinding(m.start(1), m.end(1), "named_key")
    if "'" in text or '"' in text or "`" in text:
        for m in _QUOTED.finditer(text):
            start = _sentence_start(text, m.start())
            end = _SENTENCE_END.search(text, m.end())
            sentence = text[start : end.start() if end else len(text)]
            if _CREDENTIAL.search(sentence) and not _ID_OR_DIGEST.search(sentence):
                yield SecretFinding(m.start(2), m.end(2), "named_key")
    if "|" in text:
        for row in _TABLE_ROW.finditer(text):
            cells = row.group(0).strip().strip("|").split("|")
            if not any(_ENV_NAME.fullmatch(c.strip().strip("`")) for c in cells):
                continue
            offset = row.start() + row.group(0).index("|") + 1
            for cell in cells:
                v = _CELL_VALUE.fullmatch(cell.strip())
                if v and not _ENV_NAME.fullmatch(v.group(1)):
                    at = text.index(v.group(1), offset)
                    yield SecretFinding(at, at + len(v.group(1)), "named_key")
                offset += len(cell) + 1


def _sentence_start(text: str, pos: int) -> int:
    """Where the sentence holding `pos` starts (after the last ". ", "!", "?" or newline)."""
    cut = max(text.rfind(". ", 0, pos), text.rfind("! ", 0, pos), text.rfind("? ", 0, pos))
    return max(cut + 2 if cut != -1 else 0, text.rfind("\n", 0, pos) + 1)

"""Credentials known by their shape, and the few words that name them. Pure.

Beside `memsieve.capture.nearby` (a strong value near a credential's name):
- a token written in groups ("ghp_ EyvStY gUjO71 …", "AKIA-ULJS-XTFF-…", a key hyphenated
  by a ticket tool): joined again and checked against the known formats;
- door, alarm and keypad codes after their name, in a few languages;
- passwords given to a command in quotes (`-P 'x'`, `--password 'x'`, SQL's
  `IDENTIFIED BY 'x'` / `PASSWORD 'x'`);
- a table or CSV whose header names a password column;
- `user:password` written bare, or as the decoded text of a base64 run (docker's `auth`,
  npm's `_auth`);
- BitLocker recovery keys (eight groups of six digits).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memsieve.capture import fastre, patterns
from memsieve.capture.nearby import strong_value
from memsieve.capture.shapes import SecretFinding

# Door, alarm and keypad codes after their name, in a few languages.
_ACCESS_CODE = re.compile(
    r"(?i)(?:(?:door|alarm|disarm|keypad|gate|safe|lockbox|entry|garage|server room)[ -]?"
    r"(?:code|pin)|pin[ -]?code|kod do drzwi|kod alarmu|t[üu]rcode|alarmcode|"
    r"code (?:de la porte|de l'alarme|d'acc[eè]s)|c[oó]digo (?:de (?:la )?)?(?:puerta|alarma|acesso)|"
    r"解除コード|暗証番号|门禁密码|開錠コード)"
)
_DIGITS = re.compile(r"(?<![\d.,:/-])(\d{4,10})#?(?![\d.,:/-]*\d)")


def _access_codes(text: str, low: str | None) -> Iterable[SecretFinding]:
    for name in _ACCESS_SCAN.finditer(text, low, True):
        m = _DIGITS.search(text, name.end(), name.end() + 60)
        if m and "\n" not in text[name.end() : m.start()]:
            yield SecretFinding(m.start(1), m.end(1), "access_code")


# Passwords handed to a command in quotes (a quoted value is no port or flag).
_QUOTED_PASSWORD = re.compile(
    r"(?:\s-[pPw]\s*|\s--pass(?:word)?[= ]\s*|(?i:\bidentified\s+by\s+|\bpassword\s+))"
    r"([\"'])([^\"'\n]{4,128})\1"
)
# A token written in groups: a strong prefix and its groups, joined again.
_GROUPED_TOKEN = re.compile(
    r"(?<![\w-])((?:gh[pousr]_|github_pat_|sk_live_|sk_test_|rk_live_|xox[baprs]-|glpat-|"
    r"npm_|AKIA|ASIA|sk-(?:proj-|ant-)?)[ -]{0,2}(?:[A-Za-z0-9_]{2,16}[ -]){2,}[A-Za-z0-9_]{2,16})"
)


def _grouped_tokens(text: str) -> Iterable[SecretFinding]:
    for m in _GROUPED_SCAN.finditer(text, None, True):
        # The run may take a word or two of the sentence after the token: the longest
        # prefix of groups that joins into a known format is the token.
        parts = list(re.finditer(r"[^ -]+", m.group(1)))
        for k in range(len(parts), 1, -1):
            marked = sum(any(c.isupper() or c.isdigit() for c in p.group(0)) for p in parts[1:k])
            if 3 * marked < 2 * (k - 1):
                continue  # "sk_live_ tells you the mode": words, not a token's groups
            joined = "".join(p.group(0) for p in parts[:k])
            if any(f.end - f.start >= len(joined) - 2 for f in patterns.known_formats(joined)):
                yield SecretFinding(m.start(1), m.start(1) + parts[k - 1].end(), "grouped_secret")
                break


# A table (markdown or CSV) whose header names a password column.
_HEADER_WORDS = re.compile(r"(?i)^\s*(?:password|passwd|pwd|pass|secret|token|api[ _-]?key)\s*$")


def _table_cells(text: str) -> Iterable[SecretFinding]:
    column: int | None = None
    sep = ""
    at = 0
    for line in text.split("\n"):
        line_start, at = at, at + len(line) + 1
        row = line.strip().strip("|")
        for s in ("|", ","):
            cells = row.split(s) if s in line else []
            hit = [n for n, c in enumerate(cells) if _HEADER_WORDS.match(c)]
            if hit and len(cells) >= 2:
                column, sep = hit[0], s
                break
        else:
            if column is None or sep not in line:
                column = None
                continue
            cells = row.split(sep)
            value = cells[column].strip() if column < len(cells) else ""
            if value and strong_value(value):
                start = line_start + line.index(value)
                yield SecretFinding(start, start + len(value), "prose_password")


# `user:password` written bare ("the CI variable holds admin:Vq7nR2xLp9sT4kWm").
_USER_COLON_PASS = re.compile(r"(?<![\w/:.@-])[A-Za-z][\w.-]{0,31}:([^\s:/@\"'`]{8,64})(?![\w:/@])")


def _all_classes(value: str) -> bool:
    """Upper and lower case letters and digits."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
    )


_BITLOCKER = re.compile(r"(?<![\d-])\d{6}(?:-\d{6}){7}(?![\d-])")
_USER_PASS = re.compile(r"[A-Za-z0-9._@+-]{1,64}:([^\s:/]{6,128})")


def decoded_credential(decoded: str) -> bool:
    """Whether the decoded text of a base64 run is `user:password` (a basic-auth pair)."""
    m = _USER_PASS.fullmatch(decoded.strip())
    return m is not None and strong_value(m.group(1))


def findings(text: str, low: str | None = None) -> Iterable[SecretFinding]:
    """`low`: `memsieve.capture.fastre.lowered(text)`, if the caller has it."""
    low = fastre.lowered(text) if low is None else low
    if "\n" in text and ("|" in text or "," in text):
        yield from _table_cells(text)
    # One Aho-Corasick pass finds which of the shapes' regexes can match at all.
    hits = {_SCANS.scans[i] for i in _SCANS.candidates(text, low)}
    if _ACCESS_SCAN in hits:
        yield from _access_codes(text, low)
    for m in _QUOTED_SCAN.finditer(text, low, True) if _QUOTED_SCAN in hits else ():
        if strong_value(m.group(2)):
            yield SecretFinding(m.start(2), m.end(2), "prose_password")
    if _GROUPED_SCAN in hits:
        yield from _grouped_tokens(text)
    for m in _USER_SCAN.finditer(text, low, True) if _USER_SCAN in hits else ():
        if strong_value(m.group(1)) and _all_classes(m.group(1)):
            # A generic kind: `SHA256:wVZe…` is a labelled digest (memsieve.capture.lookalikes).
            yield SecretFinding(m.start(1), m.end(1), "credential_value")
    for m in _BITLOCKER_SCAN.finditer(text, low, True) if _BITLOCKER_SCAN in hits else ():
        yield SecretFinding(m.start(), m.end(), "recovery_secret")


_SCANS = fastre.Prefilter(
    [
        fastre.Scan(rx)
        for rx in (_ACCESS_CODE, _QUOTED_PASSWORD, _GROUPED_TOKEN, _USER_COLON_PASS, _BITLOCKER)
    ]
)
_ACCESS_SCAN, _QUOTED_SCAN, _GROUPED_SCAN, _USER_SCAN, _BITLOCKER_SCAN = _SCANS.scans

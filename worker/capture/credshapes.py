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
from memsieve.capture.nearby import human_password, strong_value
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
    r"npm_|AKIA|ASIA|sk-(?:proj-|ant-)?)[ -]{0,2}(?:[A-Za-z0-9_]{2,16}[ -]){2,24}[A-Za-z0-9_]{2,16})"
)


def _grouped_tokens(text: str) -> Iterable[SecretFinding]:
    for m in _GROUPED_SCAN.finditer(text, None, True):
        # The run may take a word or two of the sentence after the token: the longest
        # prefix of groups that joins into a known format is the token.
        # (At most 26 groups, counted once: a run of thousands of "sk-sk-…" made this
        # quadratic, 14 s for one 20,000-character field.)
        parts = list(re.finditer(r"[^ -]+", m.group(1)))
        marks = [any(c.isupper() or c.isdigit() for c in p.group(0)) for p in parts]
        for k in range(len(parts), 1, -1):
            marked = sum(marks[1:k])
            if 3 * marked < 2 * (k - 1):
                continue  # "sk_live_ tells you the mode": words, not a token's groups
            joined = "".join(p.group(0) for p in parts[:k])
            if any(f.end - f.start >= len(joined) - 2 for f in patterns.known_formats(joined)):
                yield SecretFinding(m.start(1), m.start(1) + parts[k - 1].end(), "grouped_secret")
                break


# A table (markdown or CSV) whose header names a password column.
_HEADER_WORDS = re.compile(
    r"(?i)^\s*(?:\w+[ _-])?(?:password|passwd|pwd|pass|secret|token|api[ _-]?key)\s*$"
)


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
_USER_COLON_PASS = re.compile(
    r"(?<![\w/:.@-])[A-Za-z][\w.@+-]{0,63}:([^\s:/@\"'`]{8,64})(?![\w:/@])"
)
# A value in an element or a define named for a credential: <password>X</password>,
# define('DB_PASSWORD', 'X'), and a Kubernetes env entry's value under such a name.
_NAMED_VALUE = re.compile(
    r"(?i)<((?:\w+[_-])?(?:password|passwd|pass|secret|token|api[_-]?key|apikey))>"
    r"([^<\s]{4,128})</\1>"
    r"|\bdefine\(\s*['\"]\w*(?:PASS|SECRET|TOKEN|_KEY)\w*['\"]\s*,\s*['\"]([^'\"\n]{4,128})['\"]"
    r"|-\s*name:\s*['\"]?\w*(?:PASS|SECRET|TOKEN|_KEY|APIKEY)\w*['\"]?\s*\n\s*value:\s*"
    r"['\"]?([^'\"\s]{4,128})"
)
# A user and a password as the two string arguments of a call or a tuple:
# NetworkCredential("svc", "X"), auth=("sync", "X"), getConnection(url, "gen", "X").
_USER_AND_PASSWORD = re.compile(
    r"""(["'])([A-Za-z][\w.@-]{1,40})\1\s*,\s*(["'])([^"'\n\s]{6,64})\3\s*[,)]"""
)
# Passwords given to tools on their command lines: htpasswd -b FILE USER PW, rabbitmqctl
# add_user USER PW, 7z -pPW; and a .pgpass line (host:port:db:user:password).
_TOOL_PASSWORD = re.compile(
    r"\bhtpasswd\s+-\w*b\w*\s+\S+\s+\S+\s+['\"]?([^'\"\s]{4,128})"
    r"|\brabbitmqctl\s+(?:add_user|change_password)\s+\S+\s+['\"]?([^'\"\s]{4,128})"
    r"|\b7za?\s+[^\n]*?\s-p([^\s'\"]{4,128})"
    r"|(?:^|(?<=\n))[\w.*-]+:(?:\d+|\*):[\w.*-]+:[\w.*-]+:(\S{4,128})(?=\n|$)"
)
_ARGS_GATE = re.compile(r"[\"']\s*,\s*[\"']")
_CALL_WORDS = re.compile(r"(?i)auth|cred|connect|login|logon|pdo|passw|user|sign|bind")
# A secret piped into a command that reads one on stdin: echo "X" | gpg --batch …
_PIPED = re.compile(
    r"\becho\s+(?:-n\s+)?(['\"])([^'\"\n]{4,128})\1\s*\|\s*"
    r"(?:sudo\s+)?(?:gpg|openssl|passwd|chpasswd|kinit|sudo\s+-S|docker\s+login|podman\s+login|"
    r"helm\s+registry\s+login|\w+\s+login)\b"
)


def _named_value(value: str) -> bool:
    """Not a reference or a placeholder: ${VAR}, {{ secrets.X }}, <password>, ****."""
    v = value.strip()
    return (
        not v.startswith(("$", "%", "{", "<", "*"))
        and patterns.not_lookalike(v)
        and any(c.isalnum() for c in v)
        and v.lower() not in ("changeme", "password", "secret", "redacted", "null", "none")
    )


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
    for m in _NAMED_SCAN.finditer(text, low, True) if _NAMED_SCAN in hits else ():
        g = next(g for g in (2, 3, 4) if m.group(g) is not None)
        if _named_value(m.group(g)):
            yield SecretFinding(m.start(g), m.end(g), "config_secret")
    for m in _TOOL_SCAN.finditer(text, low, True) if _TOOL_SCAN in hits else ():
        g = next(g for g in (1, 2, 3, 4) if m.group(g) is not None)
        if _named_value(m.group(g)) and (g != 4 or human_password(m.group(g))):
            yield SecretFinding(m.start(g), m.end(g), "prose_password")
    if _ARGS_GATE.search(text):
        for m in _USER_AND_PASSWORD.finditer(text):
            value = m.group(4)
            before = text[max(0, m.start() - 60) : m.start()]
            if (strong_value(value) or human_password(value)) and _CALL_WORDS.search(before):
                yield SecretFinding(m.start(4), m.end(4), "prose_password")
    for m in _PIPED_SCAN.finditer(text, low, True) if _PIPED_SCAN in hits else ():
        if not m.group(2).lstrip().startswith(("$", "%", "{")):  # "$PASS" is a reference
            yield SecretFinding(m.start(2), m.end(2), "prose_password")


_SCANS = fastre.Prefilter(
    [
        fastre.Scan(rx)
        for rx in (
            _ACCESS_CODE,
            _QUOTED_PASSWORD,
            _GROUPED_TOKEN,
            _USER_COLON_PASS,
            _BITLOCKER,
            _NAMED_VALUE,
            _PIPED,
            _TOOL_PASSWORD,
        )
    ]
)
(
    _ACCESS_SCAN, _QUOTED_SCAN, _GROUPED_SCAN, _USER_SCAN, _BITLOCKER_SCAN, _NAMED_SCAN,
    _PIPED_SCAN, _TOOL_SCAN,
) = _SCANS.scans  # fmt: skip

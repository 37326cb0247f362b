"""The secret formats memsieve knows, as regexes with offsets. Pure: no I/O.

Two layers run over a string in memory (`worker/capture/secrets.py` adds prose, generic
high-entropy tokens, decoded segments and field joins on top):

1. memsieve's own patterns (`_PATTERNS`), each with a precise span and, where the format
   is loose, a validator that drops placeholders and identifiers; vendor prefixes follow
   the public token formats (and the rule list of gitleaks, MIT) for the providers agents
   meet most;
2. the regex denylists of Yelp's detect-secrets plugins, as a backstop for formats we do
   not list ourselves (Discord, Square, Mailchimp, Telegram, ...).

We do not call detect-secrets' `scan_line` or `analyze_line`: they read and mutate a
process-wide settings object (not thread-safe under a threaded Celery pool), may call
the network to *verify* a secret, and return secret values rather than offsets. The
plugins' compiled regexes give us offsets directly; its heuristic filters
(`is_sequential_string`, `is_potential_uuid`, `is_templated_secret`) drop look-alikes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import RegexBasedDetector
from memsieve.capture import fastre
from memsieve.capture.shapes import (
    URL_USERINFO,
    Pattern,
    SecretFinding,
    basic_auth,
    classes,
    config_value,
    entropy,
    entropy_assignment,
    not_lookalike,
    not_placeholder,
    random_looking,
)
from memsieve.capture.shapes import B as _B
from memsieve.capture.shapes import E as _E
from memsieve.capture.shapes import p as _p
from memsieve.capture.vendors import VENDOR_PATTERNS

__all__ = ["SecretFinding", "classes", "entropy", "known_formats", "merge", "not_lookalike"]


# Order matters only for naming: on overlap the longer span wins, ties go to the first.
_PATTERNS: tuple[Pattern, ...] = (
    _p(
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[A-Za-z0-9+/=:,\- \t\r\n]|\\n|\\r)*?"  # PEM body, also JSON-escaped (\n)
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|(?=\"|$))",
        needs=("-----BEGIN ",),
    ),
    _p(
        "private_key",
        r"PuTTY-User-Key-File-\d:[^\n]*(?:\n[^\n]+){0,40}",
        needs=("PuTTY-User-Key-File-",),
    ),
    _p(
        "gcp_service_account",
        r'"private_key_id"\s*:\s*"([0-9a-f]{32,40})"',
        1,
        needs=('"private_key_id"',),
    ),
    _p(
        "aws_access_key",
        _B + r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA|A3T[A-Z0-9])"
        r"[A-Z0-9]{16}" + _E,
        needs=(
            "AKIA",
            "ASIA",
            "ABIA",
            "ACCA",
            "AGPA",
            "AIDA",
            "AIPA",
            "ANPA",
            "ANVA",
            "AROA",
            "APKA",
            "ASCA",
            "A3T",
        ),
    ),
    _p(
        "aws_secret_key",
        r"(?i:aws)[\w .-]{0,30}?(?i:secret|key)[\w .\"'-]{0,20}?[:=\s]\s*[\"']?"
        r"(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        1,
        random_looking,
    ),
    _p(
        "github_token",
        _B + r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,251}" + _E,
        needs=("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    _p("github_token", _B + r"github_pat_[A-Za-z0-9_]{50,255}" + _E, needs=("github_pat_",)),
    _p(
        "gitlab_token",
        _B + r"(?:glpat|gldt|glft|glsoat|glrt|glptt|glcbt|glimt|gloas|glagent)-"
        r"[A-Za-z0-9_-]{20,1024}" + _E,
        needs=(
            "glpat-",
            "gldt-",
            "glft-",
            "glsoat-",
            "glrt-",
            "glptt-",
            "glcbt-",
            "glimt-",
            "gloas-",
            "glagent-",
        ),
    ),
    _p("slack_token", _B + r"xox[abposre]-(?:[0-9]+-)+[A-Za-z0-9-]{10,}", needs=("xox",)),
    _p("slack_token", _B + r"xapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{20,}", needs=("xapp-",)),
    _p(
        "slack_webhook",
        r"https://hooks\.slack\.com/services/T\w+/B\w+/\w+",
        needs=("https://hooks.slack.com/services/T",),
    ),
    _p(
        "stripe_key",
        _B + r"(?:sk|rk|whsec)_(?:live|test)_[A-Za-z0-9]{16,}" + _E,
        needs=("_live_", "_test_"),
    ),
    _p("stripe_key", _B + r"whsec_[A-Za-z0-9]{24,}" + _E, needs=("whsec_",)),
    _p("anthropic_key", _B + r"sk-ant-[A-Za-z0-9_-]{20,}" + _E, needs=("sk-ant-",)),
    _p(
        "openai_key",
        _B + r"sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}" + _E,
        0,
        lambda v: classes(v) >= 3 or "T3BlbkFJ" in v,
        needs=("sk-",),
    ),
    _p("huggingface_token", _B + r"hf_[A-Za-z0-9]{30,}" + _E, 0, random_looking, needs=("hf_",)),
    _p(
        "jwt",
        _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        needs=("eyJ",),
    ),
    _p(
        "url_password",
        URL_USERINFO + r"[^\s@]",
        1,
        not_placeholder,
        needs=("://",),
    ),
    _p(
        "azure_storage_key",
        r"(?i:AccountKey|SharedAccessKey)\s*=\s*([A-Za-z0-9+/]{20,}={0,2})",
        1,
        needs=("=",),
    ),
    _p("azure_sas", r"[?&]sig=([A-Za-z0-9%+/=]{20,})", 1, random_looking, needs=("sig=",)),
    _p("twilio_key", _B + r"(?:SK|AC)[0-9a-f]{32}" + _E, needs=("SK", "AC")),
    _p("sendgrid_key", _B + r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}" + _E, needs=("SG.",)),
    _p("npm_token", _B + r"npm_[A-Za-z0-9]{36}" + _E, needs=("npm_",)),
    _p("npm_token", r":_authToken=\s*([^\s\"']{8,})", 1, not_placeholder, needs=(":_authToken=",)),
    _p("pypi_token", _B + r"pypi-AgE[A-Za-z0-9_-]{50,}", needs=("pypi-AgE",)),
    _p("google_api_key", _B + r"AIza[0-9A-Za-z_-]{35}" + _E, needs=("AIza",)),
    _p("basic_auth", r"(?i:\bbasic)\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])", 1, basic_auth),
    _p(
        "bearer_token",
        r"(?i:\bbearer)\s+([A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9._~+/=-])",
        1,
        random_looking,
    ),
    *VENDOR_PATTERNS,
    _p(
        "config_secret",
        # No `\b` or prefix before the keyword: DB_PASSWORD and client_secret match on the
        # keyword alone, and a `(?:\w+_)*` prefix would backtrack quadratically.
        r"(?i:(?:password|passwd|passphrase|passcode|pwd|pw|secret|api[_-]?key|apikey|"
        r"passwort|kennwort|contrase[ñn]a|senha|wachtwoord|mot_de_passe|(?<![A-Za-z])pass|"
        r"(?<![A-Za-z])psk|"
        r"access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|erlang[_-]?cookie|"
        r"(?:access|auth|refresh|api|bot|session)?[_-]?token)"
        # An encoding named after the key (SMTP_PASS_B64, mqtt_pass_hex) hides nothing.
        r"(?:[_-](?:b64|base64|hex|enc|encoded|plain|raw))?\b)"
        # The value is on the key's line: an empty `SESSION_SECRET=` is followed by the
        # next line's key, not by its value.
        r"[\"'\]]{0,2}\s*(?::=|=>|[?+]=|[:=])[ \t]*(?:\"([^\"\n]{6,})\"|'([^'\n]{6,})'|([^\s\"',;`]{6,}))",
        0,
        needs=(":", "="),
    ),
)
_CONFIG_VALUE_GROUPS = (1, 2, 3)

_ASSIGNMENT_RE = re.compile(
    r"(?<![\w.-])([A-Za-z_][\w.-]{1,60})[\"']?\s*(?::=|=>|[:=])[ \t]*[\"']?"
    r"([A-Za-z0-9+/_=-]{20,})(?![A-Za-z0-9+/_=-])"
)

# detect-secrets plugins whose denylists we reuse. IPPublicDetector is not a secret;
# the keyword and high-entropy plugins are not regex denylists (our `config_secret` and
# `_ASSIGNMENT_RE` cover them with placeholder and digest handling). The IBM, Cloudant
# and Softlayer keyword patterns have an optional prefix, so they fire on any
# `key: value` prose; Artifactory's `AP[0-9A-F]...` fires on capitalised words.
_DS_SKIP = {
    "IPPublicDetector",
    "IbmCloudIamDetector",
    "IbmCosHmacDetector",
    "CloudantDetector",
    "SoftlayerDetector",
    "ArtifactoryDetector",
    # `url_password` reads the same `scheme://user:password@` with placeholder handling
    # (`<senha>`, `${DB_PASSWORD}`, `CHANGE_ME`).
    "BasicAuthDetector",
}


def _slug(name: str) -> str:
    """'DiscordBotToken' -> 'discord_bot_token'."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


@lru_cache(maxsize=1)
def _ds_patterns() -> tuple[Pattern, ...]:
    out: list[Pattern] = []
    classes: list[type[Any]] = list(get_mapping_from_secret_type_to_class().values())
    for cls in classes:
        if not issubclass(cls, RegexBasedDetector) or cls.__name__ in _DS_SKIP:
            continue
        kind = _slug(cls.__name__.removesuffix("Detector"))
        for regex in cls().denylist:
            out.append(Pattern(kind, regex))
    return tuple(out)


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    # Some detect-secrets regexes include the delimiter around a token.
    while start < end and text[start] in " \t\r\n\"'=:`":
        start += 1
    while end > start and text[end - 1] in " \t\r\n\"'`":
        end -= 1
    return start, end


def _own_findings(text: str, low: str | None, hits: list[int]) -> Iterable[SecretFinding]:
    """Findings of our patterns; `hits`: the indices of those `_formats()` let through."""
    scans = _formats().scans
    for i in hits:
        pat = _PATTERNS[i]
        for m in scans[i].finditer(text, low, checked=True):
            if pat.kind == "config_secret":
                g = next(g for g in _CONFIG_VALUE_GROUPS if m.group(g) is not None)
                if config_value(m.group(g), quoted=g in (1, 2)):
                    yield SecretFinding(m.start(g), m.end(g), pat.kind)
                continue
            value = m.group(pat.group)
            if value and (pat.valid is None or pat.valid(value)):
                yield SecretFinding(m.start(pat.group), m.end(pat.group), pat.kind)
    if ":" not in text and "=" not in text:
        return  # every assignment has one
    for m in _ASSIGNMENT_RE.finditer(text):
        if entropy_assignment(m.group(1), m.group(2)):
            yield SecretFinding(m.start(2), m.end(2), "high_entropy_string")


@lru_cache(maxsize=1)
def _ds_ordered() -> tuple[Pattern, ...]:
    """detect-secrets' patterns grouped by their regex flags (the order their findings
    have always come in: on a tie, merge() names a span after the first finding)."""
    by_flags: dict[int, list[Pattern]] = {}
    for pat in _ds_patterns():
        by_flags.setdefault(pat.regex.flags, []).append(pat)
    return tuple(p for pats in by_flags.values() for p in pats)


@lru_cache(maxsize=1)
def _formats() -> fastre.Prefilter:
    """Our patterns (behind their hand-written `needs` too), then `_ds_ordered`, each
    behind the literals of its regex: a text is searched with the few it can match."""
    ours = [fastre.Scan(p.regex) for p in _PATTERNS]
    theirs = [fastre.Scan(p.regex) for p in _ds_ordered()]
    return fastre.Prefilter(ours + theirs, [p.needs for p in _PATTERNS] + [() for _ in theirs])


def _ds_findings(text: str, low: str | None, hits: list[int]) -> Iterable[SecretFinding]:
    """Findings of detect-secrets' patterns; `hits` as for `_own_findings`."""
    pats, scans, first = _ds_ordered(), _formats().scans, len(_PATTERNS)
    for i in hits:
        for m in scans[i].finditer(text, low, checked=True):
            start, end = _trim(text, m.start(), m.end())
            if end - start >= 8:
                yield SecretFinding(start, end, pats[i - first].kind)


def _ds_group_findings(text: str, pats: tuple[Pattern, ...]) -> Iterable[SecretFinding]:
    for pat in pats:
        for m in pat.regex.finditer(text):
            start, end = _trim(text, m.start(), m.end())
            if end - start >= 8:
                yield SecretFinding(start, end, pat.kind)


# Kinds found by shape rather than by format: a format-specific finding in the same
# span names it ("github_token" beats "encoded_secret").
GENERIC_KINDS = frozenset(
    {
        "encoded_secret",
        "high_entropy_token",
        "prefixed_token",
        "high_entropy_string",
        "prose_password",
        "credential_value",
    }
)


def _rank(f: SecretFinding) -> tuple[bool, int]:
    return (f.kind not in GENERIC_KINDS, f.end - f.start)


def merge(findings: Iterable[SecretFinding]) -> list[SecretFinding]:
    """Union overlapping spans; a specific kind beats a generic one, then the longest."""
    ordered = sorted(findings, key=lambda f: (f.start, -(f.end - f.start)))
    merged: list[SecretFinding] = []
    best: list[tuple[bool, int]] = []  # rank of the finding that named each merged span
    for f in ordered:
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            kind = f.kind if _rank(f) > best[-1] else last.kind
            best[-1] = max(best[-1], _rank(f))
            merged[-1] = SecretFinding(last.start, max(last.end, f.end), kind)
        else:
            merged.append(f)
            best.append(_rank(f))
    return merged


def _overlaps(f: SecretFinding, spans: list[SecretFinding]) -> bool:
    return any(f.start < s.end and s.start < f.end for s in spans)


def known_formats(text: str, low: str | None = None) -> list[SecretFinding]:
    """Secrets of a known format or `key = value` shape in `text`, merged and sorted.
    `low`: `fastre.lowered(text)`, if the caller has it."""
    low = fastre.lowered(text) if low is None else low
    hits = _formats().candidates(text, low)
    first = len(_PATTERNS)
    own = merge(_own_findings(text, low, [i for i in hits if i < first]))
    # Our spans are the precise ones (e.g. only the password of a URL); a detect-secrets
    # hit counts only where none of ours already covers it.
    theirs = [i for i in hits if i >= first]
    found = own + [f for f in _ds_findings(text, low, theirs) if not _overlaps(f, own)]
    return merge(found) if len(found) > len(own) else own

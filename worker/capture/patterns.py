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

import base64
import binascii
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.filters import heuristic
from detect_secrets.plugins.base import RegexBasedDetector


@dataclass(frozen=True, order=True)
class SecretFinding:
    """A secret at text[start:end]; `kind` names its format, e.g. 'github_token'."""

    start: int
    end: int
    kind: str


Validator = Callable[[str], bool]

# Values that configuration examples and docs use in place of a real secret.
_PLACEHOLDER_RE = re.compile(
    r"""^(?:
        \$\{?[A-Za-z_][A-Za-z0-9_]*\}?      # $VAR, ${VAR}
      | \{\{?[^{}]*\}\}?                    # {password}, {{ secret }}
      | <[^<>]*>                            # <token>
      | %\(?[A-Za-z_]*\)?s                  # %s, %(password)s
      | [*x.#?-]+                           # ****, xxxx, ...
      | \[REDACTED:[a-z0-9_]+\]             # our own marker: redact() is idempotent
      | [A-Z][A-Z0-9_]*                     # an env var name: API_KEY
      | (?i:none|null|nil|true|false|empty|changeme|change_me|password|passwd|secret|
         token|redacted|example|dummy|placeholder|your[_-]?\w*|my[_-]?\w*)
    )$""",
    re.VERBOSE,
)
# `settings.api_key`, `os.environ["X"]`, `get_token()`: code that fetches a secret.
# The value may be cut at a quote: `os.environ[` is what the pattern sees of os.environ['X'].
_CODE_REF_RE = re.compile(r"^[A-Za-z_]\w*(?:\.\w+)*(?:\.\w+|[\[(].*)$")


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    if not s:
        return 0.0
    counts: dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def classes(s: str) -> int:
    return sum(
        (
            any(c.islower() for c in s),
            any(c.isupper() for c in s),
            any(c.isdigit() for c in s),
        )
    )


def not_placeholder(value: str) -> bool:
    return not _PLACEHOLDER_RE.match(value) and not heuristic.is_templated_secret(value)


def not_lookalike(value: str) -> bool:
    """detect-secrets' filters: not abcdef123456-like, not a UUID, not a template."""
    return not_placeholder(value) and not (
        heuristic.is_sequential_string(value) or heuristic.is_potential_uuid(value)
    )


def _random_looking(value: str) -> bool:
    """A token, not a word: mixed letter cases and digits, or high entropy."""
    return not_placeholder(value) and (classes(value) >= 2 and entropy(value) >= 3.0)


def _config_value(value: str) -> bool:
    """A non-trivial value after `password=` / `token:`; short lowercase words are prose."""
    v = value.strip("\"'`")
    if len(v) < 6 or not not_placeholder(v) or _CODE_REF_RE.match(v):
        return False
    if re.fullmatch(r"[\d_.,]+", v):
        return False  # a count or a size: MAX_TOKENS = 300_000
    if re.fullmatch(r"[a-z]+(?:[-_][a-z]+)*", v) and len(v) < 16:
        return False  # "token: expires", "secret: rotate-weekly" are prose
    return True


def _basic_auth(value: str) -> bool:
    """`Basic <b64>` is a credential when the base64 decodes to `user:password`."""
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in raw


_SECRETISH_KEY = r"(?:key|secret|token|pass|pwd|auth|cred|sig|salt|private|session|cookie)"
_HASHISH_KEY = re.compile(r"(?i)(?:sha|hash|digest|checksum|commit|rev|etag|id|uuid|hex|version)$")


def _entropy_assignment(key: str, value: str) -> bool:
    """A high-entropy base64/hex value assigned to a key (key=value, key: value)."""
    if _HASHISH_KEY.search(key) or not not_placeholder(value):
        return False
    secretish = re.search(_SECRETISH_KEY, key, re.IGNORECASE) is not None
    if re.fullmatch(r"[0-9a-fA-F]+", value):
        # Hex digests (commits, content hashes) are everywhere in lessons; only a key
        # that names a credential makes a hex string a secret.
        return secretish and len(value) >= 24 and entropy(value) >= 3.0
    threshold = 3.5 if secretish else 4.3
    return len(value) >= 20 and classes(value) >= 2 and entropy(value) >= threshold


@dataclass(frozen=True)
class _Pattern:
    kind: str
    regex: re.Pattern[str]
    group: int | str = 0  # which group is the secret (0: the whole match)
    valid: Validator | None = None
    # Case-sensitive literals of which every match contains at least one: a text with none
    # of them cannot match, and the regex is not run (most start with a look-behind, so
    # `re` would try them at every position). Empty: always run.
    needs: tuple[str, ...] = ()


def _p(
    kind: str,
    pattern: str,
    group: int | str = 0,
    valid: Validator | None = None,
    needs: tuple[str, ...] = (),
) -> _Pattern:
    return _Pattern(kind, re.compile(pattern), group, valid, needs)


_B = r"(?<![A-Za-z0-9_])"  # a token starts here
_E = r"(?![A-Za-z0-9_])"  # and ends here

# Order matters only for naming: on overlap the longer span wins, ties go to the first.
_PATTERNS: tuple[_Pattern, ...] = (
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
        _random_looking,
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
    _p("huggingface_token", _B + r"hf_[A-Za-z0-9]{30,}" + _E, 0, _random_looking, needs=("hf_",)),
    _p(
        "jwt",
        _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        needs=("eyJ",),
    ),
    _p(
        "url_password",
        r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@?#]+:([^\s@/?#]+)@[^\s@]",
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
    _p("azure_sas", r"[?&]sig=([A-Za-z0-9%+/=]{20,})", 1, _random_looking, needs=("sig=",)),
    _p("twilio_key", _B + r"(?:SK|AC)[0-9a-f]{32}" + _E, needs=("SK", "AC")),
    _p("sendgrid_key", _B + r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}" + _E, needs=("SG.",)),
    _p("npm_token", _B + r"npm_[A-Za-z0-9]{36}" + _E, needs=("npm_",)),
    _p("npm_token", r":_authToken=\s*([^\s\"']{8,})", 1, not_placeholder, needs=(":_authToken=",)),
    _p("pypi_token", _B + r"pypi-AgE[A-Za-z0-9_-]{50,}", needs=("pypi-AgE",)),
    _p("google_api_key", _B + r"AIza[0-9A-Za-z_-]{35}" + _E, needs=("AIza",)),
    _p("basic_auth", r"(?i:\bbasic)\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])", 1, _basic_auth),
    _p(
        "bearer_token",
        r"(?i:\bbearer)\s+([A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9._~+/=-])",
        1,
        _random_looking,
    ),
    # Vendor formats with a fixed prefix (public token formats; gitleaks' rule list).
    _p("shopify_token", _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E, needs=("shp",)),
    _p("digitalocean_token", _B + r"do[opr]_v1_[a-f0-9]{64}" + _E, needs=("_v1_",)),
    _p("vault_token", _B + r"hv[sbr]\.[A-Za-z0-9_-]{24,}" + _E, needs=("hvs.", "hvb.", "hvr.")),
    _p(
        "terraform_token",
        _B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",
        needs=(".atlasv1.",),
    ),
    _p("doppler_token", _B + r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,}", needs=("dp.",)),
    _p("databricks_token", _B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E, needs=("dapi",)),
    _p("grafana_token", _B + r"gl(?:c|sa)_[A-Za-z0-9_=+/-]{32,}" + _E, needs=("glc_", "glsa_")),
    _p("newrelic_key", _B + r"NR(?:AK|JS|II|RA)-[A-Z0-9]{19,32}" + _E, needs=("NR",)),
    _p("linear_key", _B + r"lin_(?:api|oauth)_[A-Za-z0-9]{40}" + _E, needs=("lin_",)),
    _p("postman_key", _B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _E, needs=("PMAK-",)),
    _p("pulumi_token", _B + r"pul-[a-f0-9]{40}" + _E, needs=("pul-",)),
    _p("atlassian_token", _B + r"AT(?:ATT|CTT|BB)[A-Za-z0-9_=+/-]{20,}" + _E, needs=("AT",)),
    _p("figma_token", _B + r"figd_[A-Za-z0-9_-]{30,}" + _E, needs=("figd_",)),
    _p("heroku_key", _B + r"HRKU-[A-Za-z0-9_-]{30,}" + _E, needs=("HRKU-",)),
    _p("mailgun_key", _B + r"key-[a-f0-9]{32}" + _E, needs=("key-",)),
    _p("dropbox_token", _B + r"sl\.[A-Za-z0-9_-]{60,}" + _E, needs=("sl.",)),
    _p(
        "age_secret_key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", needs=("AGE-",)
    ),
    _p("supabase_token", _B + r"sb[pa]_[a-f0-9]{40}" + _E, needs=("sbp_", "sba_")),
    _p("sentry_token", _B + r"sntry[su]_[A-Za-z0-9_=+/-]{30,}", needs=("sntry",)),
    _p(
        "sentry_dsn",
        r"https?://([a-f0-9]{32})(?::[a-f0-9]{32})?@[\w.-]*sentry[\w.-]*",
        1,
        needs=("sentry",),
    ),
    _p("airtable_token", _B + r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}" + _E, needs=("pat",)),
    _p(
        "notion_token",
        _B + r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})" + _E,
        needs=("secret_", "ntn_"),
    ),
    _p(
        "webhook_url",
        r"https://(?:discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}"
        r"|[\w-]+\.webhook\.office\.com/\S{20,}|outlook\.office\.com/webhook/\S{20,})",
        needs=("https://",),
    ),
    _p("square_token", _B + r"(?:sq0atp|sq0csp)-[A-Za-z0-9_-]{22,43}" + _E, needs=("sq0",)),
    _p("square_token", _B + r"EAAA[A-Za-z0-9_-]{60}" + _E, needs=("EAAA",)),
    _p(
        "braintree_token",
        r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}",
        needs=("access_token$",),
    ),
    _p("mapbox_token", _B + r"[ps]k\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}", needs=(".eyJ",)),
    _p(
        "azure_ad_secret",
        r"(?<![\w~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])",
        needs=("Q~",),
    ),
    _p("google_oauth", _B + r"GOCSPX-[A-Za-z0-9_-]{28}" + _E, needs=("GOCSPX-",)),
    _p("google_oauth", _B + r"ya29\.[A-Za-z0-9_-]{30,}", needs=("ya29.",)),
    _p("google_oauth", r"(?<![\w/])1//0[A-Za-z0-9_-]{40,}", needs=("1//0",)),
    _p(
        "ai_api_key",
        # Replicate, Groq, Perplexity, xAI, OpenRouter, LangSmith, Pinecone, Tavily, Cohere-like.
        _B
        + r"(?:r8_|gsk_|pplx-|xai-|sk-or-v1-|lsv2_(?:pt|sk)_|pcsk_|tvly-|fc-)[A-Za-z0-9_-]{20,}"
        + _E,
        0,
        lambda v: classes(v) >= 2,
        needs=("r8_", "gsk_", "pplx-", "xai-", "sk-or-", "lsv2_", "pcsk_", "tvly-", "fc-"),
    ),
    _p("hf_org_token", _B + r"api_org_[A-Za-z0-9]{30,}" + _E, needs=("api_org_",)),
    _p(
        "ci_token",
        _B
        + r"(?:CCIPAT_|bkua_|dckr_pat_|rubygems_|CLOJARS_|glrt-|nfp_|vercel_)[A-Za-z0-9_-]{20,}"
        + _E,
        needs=("CCIPAT_", "bkua_", "dckr_pat_", "rubygems_", "CLOJARS_", "nfp_", "vercel_"),
    ),
    _p("nuget_key", _B + r"oy2[a-z0-9]{43}" + _E, needs=("oy2",)),
    _p("crates_token", _B + r"cio[A-Za-z0-9]{32}" + _E, 0, _random_looking, needs=("cio",)),
    _p("brevo_key", _B + r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}" + _E, needs=("xkeysib-",)),
    _p(
        "planetscale_token",
        _B + r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,}" + _E,
        needs=("pscale_",),
    ),
    _p("flutterwave_key", _B + r"FLW(?:SECK|PUBK)(?:_TEST)?-[a-f0-9]{32}-X" + _E, needs=("FLW",)),
    _p("easypost_key", _B + r"EZ[AT]K[A-Za-z0-9]{54}" + _E, needs=("EZAK", "EZTK")),
    _p("shippo_token", _B + r"shippo_(?:live|test)_[a-f0-9]{40}" + _E, needs=("shippo_",)),
    _p("alibaba_key", _B + r"LTAI[A-Za-z0-9]{20}" + _E, needs=("LTAI",)),
    _p("tencent_key", _B + r"AKID[A-Za-z0-9]{32}" + _E, needs=("AKID",)),
    _p(
        "yandex_token",
        _B + r"(?:AQVN[A-Za-z0-9_-]{35,38}|y[0-3]_[A-Za-z0-9_-]{55,})" + _E,
        needs=("AQVN", "y0_", "y1_", "y2_", "y3_"),
    ),
    _p("fly_token", r"FlyV1 fm\d_[A-Za-z0-9+/=_,-]{40,}", needs=("FlyV1",)),
    _p("okta_token", _B + r"00[A-Za-z0-9_-]{40}" + _E, 0, lambda v: classes(v) >= 3, needs=("00",)),
    _p(
        "password_hash",
        # A crypt/bcrypt/argon2 hash can be cracked offline: treat it as a credential.
        r"\$(?:2[abxy]\$\d\d\$[./A-Za-z0-9]{53}|apr1\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}"
        r"|[56]\$(?:rounds=\d+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43,86}"
        r"|argon2(?:id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+)",
        needs=("$",),
    ),
    _p(
        "config_secret",
        # No `\b` or prefix before the keyword: DB_PASSWORD and client_secret match on the
        # keyword alone, and a `(?:\w+_)*` prefix would backtrack quadratically.
        r"(?i:(?:password|passwd|passphrase|passcode|pwd|pw|secret|api[_-]?key|apikey|"
        r"passwort|kennwort|contrase[ñn]a|senha|wachtwoord|mot_de_passe|"
        r"access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|"
        r"(?:access|auth|refresh|api|bot|session)?[_-]?token)\b)"
        r"[\"'\]]?\s*(?::=|=>|[:=])\s*(?:\"([^\"\n]{6,})\"|'([^'\n]{6,})'|([^\s\"',;`]{6,}))",
        0,
        needs=(":", "="),
    ),
)
_CONFIG_VALUE_GROUPS = (1, 2, 3)

_ASSIGNMENT_RE = re.compile(
    r"(?<![\w.-])([A-Za-z_][\w.-]{1,60})[\"']?\s*(?::=|=>|[:=])\s*[\"']?"
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
}


def _slug(name: str) -> str:
    """'DiscordBotToken' -> 'discord_bot_token'."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


@lru_cache(maxsize=1)
def _ds_patterns() -> tuple[_Pattern, ...]:
    out: list[_Pattern] = []
    classes: list[type[Any]] = list(get_mapping_from_secret_type_to_class().values())
    for cls in classes:
        if not issubclass(cls, RegexBasedDetector) or cls.__name__ in _DS_SKIP:
            continue
        kind = _slug(cls.__name__.removesuffix("Detector"))
        for regex in cls().denylist:
            out.append(_Pattern(kind, regex))
    return tuple(out)


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    # Some detect-secrets regexes include the delimiter around a token.
    while start < end and text[start] in " \t\r\n\"'=:`":
        start += 1
    while end > start and text[end - 1] in " \t\r\n\"'`":
        end -= 1
    return start, end


def _own_findings(text: str) -> Iterable[SecretFinding]:
    for pat in _PATTERNS:
        if pat.needs:
            for lit in pat.needs:
                if lit in text:
                    break
            else:
                continue
        for m in pat.regex.finditer(text):
            if pat.kind == "config_secret":
                g = next(g for g in _CONFIG_VALUE_GROUPS if m.group(g) is not None)
                if _config_value(m.group(g)):
                    yield SecretFinding(m.start(g), m.end(g), pat.kind)
                continue
            value = m.group(pat.group)
            if value and (pat.valid is None or pat.valid(value)):
                yield SecretFinding(m.start(pat.group), m.end(pat.group), pat.kind)
    if ":" not in text and "=" not in text:
        return  # every assignment has one
    for m in _ASSIGNMENT_RE.finditer(text):
        if _entropy_assignment(m.group(1), m.group(2)):
            yield SecretFinding(m.start(2), m.end(2), "high_entropy_string")


def _ds_findings(text: str) -> Iterable[SecretFinding]:
    for pat in _ds_patterns():
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


def known_formats(text: str) -> list[SecretFinding]:
    """Secrets of a known format or `key = value` shape in `text`, merged and sorted."""
    own = merge(_own_findings(text))
    # Our spans are the precise ones (e.g. only the password of a URL); a detect-secrets
    # hit counts only where none of ours already covers it.
    found = own + [f for f in _ds_findings(text) if not _overlaps(f, own)]
    return merge(found) if len(found) > len(own) else own

"""Building blocks of the secret patterns: findings, validators, the pattern type. Pure."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from detect_secrets.filters import heuristic


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
      | [A-Za-z0-9_-]{1,16}(?:\.{3}|…)[A-Za-z0-9]{0,4}    # sk-..., sk_live_..., sk-…Ab12
      | \[[A-Z][A-Z _-]*\]                                # [REDACTED], [FILTERED], [MASKED]
      | [A-Za-z0-9]{1,12}[_-]?\*{3,}[A-Za-z0-9]{0,6}       # ghp_****MNm3: masked but the last 4
      | \$\(.*\)?                                        # $(vault kv get …): fetched
      | (?i:replace[-_ ]?me|fill[-_ ]?me|set[-_ ]?me|todo|tbd|xxx+)
      | \[REDACTED:[a-z0-9_]+\]             # our own marker: redact() is idempotent
      | [A-Z][A-Z_]*                        # an env var name: API_KEY
      | [A-Z][A-Z0-9]*_[A-Z0-9_]*           # one with digits has an underscore: S3_KEY
      | (?i:none|null|nil|true|false|empty|changeme|change_me|password|passwd|secret|
         token|redacted|example|dummy|placeholder)
      # your_token, my-password; not a value with digits that happens to start so
      # ("MyO9X60mNkNTv1", "myZ7rq2Lx" are passwords)
      | (?i:your|my)[_-]?[A-Za-z_-]*
    )$""",
    re.VERBOSE,
)
# `settings.api_key`, `os.environ["X"]`, `get_token()`: code that fetches a secret.
# The value may be cut at a quote: `os.environ[` is what the pattern sees of os.environ['X'].
# Each part starts with a letter: `December.2019` is a password, not an attribute.
_CODE_REF_RE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\.[A-Za-z_]\w*|[\[(].*)$")


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


# An upper-case run with digits all through it is a key (`UD1PIP1GI6HAZR61…`), not the
# name of an environment variable.
_UPPER_KEY_RE = re.compile(r"(?=(?:[A-Z]*\d){4})[A-Z0-9]{16,}")


# A dotted code reference where a password could stand: module.db.password,
# random_password.db.result (an underscore, or at most three parts; unlike _CODE_REF_RE,
# which config values use, plasma.bison.onyx.hazel.comet is a passphrase, not a reference).
CODE_REF = re.compile(
    r"[a-z][a-z0-9]*(?:\.[a-z][a-z0-9]*){1,2}|(?=[a-z0-9.]*_)[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+"
)


def not_placeholder(value: str) -> bool:
    if _UPPER_KEY_RE.fullmatch(value):
        return not heuristic.is_templated_secret(value)
    return not _PLACEHOLDER_RE.match(value) and not heuristic.is_templated_secret(value)


def not_lookalike(value: str) -> bool:
    """detect-secrets' filters: not abcdef123456-like, not a UUID, not a template."""
    return not_placeholder(value) and not (
        heuristic.is_sequential_string(value) or heuristic.is_potential_uuid(value)
    )


def random_looking(value: str) -> bool:
    """A token, not a word: mixed letter cases and digits, or high entropy."""
    return not_placeholder(value) and (classes(value) >= 2 and entropy(value) >= 3.0)


# A log's mask where the value was, maybe followed by the next query parameter:
# `[FILTERED]&uid=8812`, `FILTERED]` (its bracket read as a quote), `***&`, `<hidden>`.
_MASKED = re.compile(r"(?:\[?[A-Z][A-Z _-]*\]|\*{3,}|<[a-z _-]+>)(?:[&.,;:]|$)")


def masked(value: str) -> bool:
    return _MASKED.match(value) is not None


def config_value(value: str, quoted: bool = False) -> bool:
    """A non-trivial value after `password=` / `token:`; short lowercase words are prose.
    `quoted`: written in quotes, a literal (`'dp.st.prd.gCN6…'`), never a code reference."""
    v = value.strip("\"'`")
    if masked(v) or not not_placeholder(v.rstrip(",;:")):  # `sk_live_...` is no value
        return False
    v = v.rstrip(".,;:")
    if len(v) < 6 or not not_placeholder(v) or (not quoted and _CODE_REF_RE.match(v)):
        return False
    if re.fullmatch(r"[\d_.,]+", v):
        return False  # a count or a size: MAX_TOKENS = 300_000
    if re.fullmatch(r"[a-z]+(?:[-_][a-z]+)*", v) and len(v) < 16:
        return False  # "token: expires", "secret: rotate-weekly" are prose
    return True


def basic_auth(value: str) -> bool:
    """`Basic <b64>` is a credential when the base64 decodes to `user:password`."""
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in raw


_SECRETISH_KEY = r"(?:key|secret|token|pass|pwd|auth|cred|sig|salt|private|session|cookie)"
_HASHISH_KEY = re.compile(r"(?i)(?:sha|hash|digest|checksum|commit|rev|etag|id|uuid|hex|version)$")


def entropy_assignment(key: str, value: str) -> bool:
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
class Pattern:
    kind: str
    regex: re.Pattern[str]
    group: int | str = 0  # which group is the secret (0: the whole match)
    valid: Validator | None = None
    # Case-sensitive literals of which every match contains at least one: a text with none
    # of them cannot match, and the regex is not run (most start with a look-behind, so
    # `re` would try them at every position). Empty: always run.
    needs: tuple[str, ...] = ()


def p(
    kind: str,
    pattern: str,
    group: int | str = 0,
    valid: Validator | None = None,
    needs: tuple[str, ...] = (),
) -> Pattern:
    return Pattern(kind, re.compile(pattern), group, valid, needs)


# `scheme://user:password@`: the password is group 1 (url_password; benign's stand-ins).
URL_USERINFO = r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@?#]*:([^\s@/?#]+)@"
B = r"(?<![A-Za-z0-9_])"  # a token starts here
E = r"(?![A-Za-z0-9_])"  # and ends here

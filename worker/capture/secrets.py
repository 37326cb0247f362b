"""Secret detection and redaction for capture events. Pure: no I/O, no global state.

`find_secrets(text)` runs, over one string:

1. the known formats and `key = value` shapes of `memsieve.capture.patterns` (our own
   patterns plus detect-secrets' plugin regexes);
2. credentials in prose: "the password is hunter3x", "login admin / S3cr3t!",
   "use Tr0ub4dor as the password", `bob:Hunter42@host` (detect-secrets' keyword plugin
   only reads assignments; nobody writes lessons in `key=value`);
3. generic tokens: a vendor-style prefix with a random tail, or a long mixed-case
   random-looking run, so formats nobody listed are still caught;
4. decoded segments: base64, hex, URL-encoding and backslash/HTML escapes are decoded
   and scanned again (two levels deep); a hit redacts the whole encoded run;
5. a normalised copy (NFKC, zero-width and bidi characters removed) when the text is
   not ASCII, so `ghp_` with a zero-width space inside is still a GitHub token.

`scan_fields` scans every field of an event and also the seams between neighbouring
fields, so a token split across heading and content (or across two tags) is found.
`redact` re-scans its own output until nothing is found: a second key hidden behind the
first, or made by cutting the first out, is redacted too.

A `SecretFinding` holds only the kind and offsets, never the value.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import html
import re
import unicodedata
from collections.abc import Iterable, Sequence
from urllib.parse import unquote_plus

from memsieve.capture import patterns
from memsieve.capture.patterns import SecretFinding, classes, entropy, merge

__all__ = [
    "SecretFinding",
    "find_secrets",
    "fingerprint",
    "keyed_id",
    "redact",
    "redact_spans",
    "scan_fields",
]

MAX_DEPTH = 2  # base64 inside URL-encoding inside the text is deep enough
MAX_PASSES = 4  # redact(): re-scan rounds before giving up on the whole text
SEAM = 96  # characters on each side of a field boundary scanned as one text
_TOKEN_END = re.compile(r"[\w+/=.:-]*$")
_TOKEN_START = re.compile(r"[\w+/=.:-]*")
# A space-joined seam can only hold something new when the left side sets up a value.
_SEAM_CUES = ("pass", "pwd", "pw", "pin", "token", "secret", "key", "auth", "bearer", "basic",
              "login", "log in", "user", "cred", "account", "-----")  # fmt: skip

# --- prose credentials ------------------------------------------------------------------
_PW = (
    r"(?:pass(?:word|phrase|code|wd)?|pwd|pw|pin|passwort|kennwort|mot de passe|mdp|"
    r"contrase[ñn]a|clave|senha|wachtwoord|has[łl]o|l[öo]senord|salasana|heslo|parola|"
    r"[şs]ifre|пароль|密码|密碼|パスワード|비밀번호)"
)
_TOKEN = (
    r"(?:api[ _-]?(?:key|token|secret)|access[ _-]?(?:key|token)|secret[ _-]?key|"
    r"auth(?:entication)?[ _-]?(?:token|key)|bearer[ _-]?token|private[ _-]?key|"
    r"client[ _-]?secret|session[ _-]?token|refresh[ _-]?token|token|secret)"
)
_IS = (
    r"(?:is now|was changed to|changed to|is set to|was set to|set to|became|reads|is|was|"
    r"are|were|ist|est|es|era|é|är|on|jest|=|:|：|->|=>|—|–|是|为|は|는|은)"
)
_QUOTE_OPEN = "\"'“‘`«(["
_VALUE = r"[\"'“‘`«(\[]*([^\s\"'”’`»]{4,128})"
_PROSE_AFTER = re.compile(
    rf"(?i)(?<![A-Za-z0-9_-])({_PW}|{_TOKEN})(?![A-Za-z0-9_-])"
    r"(?:\s+(?:for|of|to|on|at)\s+(?:the\s+|our\s+|my\s+)?[^\s,;:]{1,40}(?:\s+[^\s,;:=]{1,30})?)?"
    rf"\s*{_IS}\s*{_VALUE}"
)
_PROSE_BARE = re.compile(rf"(?i)(?<![\w-])(?:password|passwd|pwd|passphrase)\s+{_VALUE}")
_PROSE_BEFORE = re.compile(
    r"(?i)(?<![\w\"'`])[\"'`]?([^\s\"'`]{6,64})[\"'`]?\s+(?:is|was|as)\s+"
    r"(?:the|my|our|your|his|her|their|a|an)\s+(?:(?:new|old|current|admin|root|db|database|"
    r"wifi|wi-fi|vpn|ssh|sudo|master)\s+)?(?:password|passphrase|passwd|pwd|passcode|pin)\b"
)
_LOGIN = re.compile(
    r"(?i)(?<![\w-])(?:log-?in|sign[ -]?in|user(?:name)?|creds?|credentials?|account)(?![\w-])"
    r"\s*(?:is|are|was|=|:|with|as)?\s*[\"'`]?(\w[^\s/:\"'`|,]{0,63})[\"'`]?"
    r"\s*(?:/|:|,|\||\s)\s*(?:(?:and\s+)?(?:pass(?:word)?|pwd|pw)\s*(?:is|:|=)?\s*)?"
    r"[\"'`]?([^\s\"'`]{4,64})"
)
_USER_PASS_HOST = re.compile(r"(?<![\w/:])[\w.+-]{1,64}:([^\s@/:]{4,128})@[\w-]+(?:\.[\w-]+)+")
# A keyword followed straight by a random-looking value: "API key 3f2c…", "TOTP secret
# JBSWY3DP…", "auth token: 'a8f5…'".
_KEYWORD_VALUE = re.compile(
    rf"(?i)(?<![A-Za-z0-9_-]){_TOKEN}(?![A-Za-z0-9_-])(?:\s+(?:is|was|of|for|=|:))?\s*[:=]?\s*"
    r"[\"'`]?([A-Za-z0-9_\-./+=~]{16,256})"
)
# Passwords on command lines: mysql -pX, curl -u user:X, sshpass -p X, redis-cli -a X.
_CLI_PASSWORD = re.compile(
    r"(?:\bmysql(?:dump|admin)?\b[^\n]*?\s-p[\"']?([^\s\"'-][^\s\"']{3,})"
    r"|\s(?:-u|--user)\s+[\"']?[^\s:\"']+:([^\s\"'@]{4,})"
    r"|\bsshpass\s+-p\s*[\"']?([^\s\"']{4,})"
    r"|\bredis-cli\b[^\n]*?\s-a\s+[\"']?([^\s\"']{4,}))"
)
_PROSE_NEEDS = (
    "pass", "pwd", "pw", "pin", "token", "secret", "key", "log", "sign", "user", "cred",
    "account", "@", "mdp", "mysql", "-u", "sshpass", "redis-cli", "wort", "contrase", "clave", "senha", "has", "sifre", "şifre",
    "пароль", "密", "パスワード", "비밀번호", "salasana", "heslo", "parola", "senord",
)  # fmt: skip
# Words that follow "the password is" in lessons about passwords, not passwords.
_STOP = frozenset(
    """
    required needed necessary mandatory optional wrong incorrect correct invalid valid expired
    empty blank missing stored saved kept set reset changed rotated hashed encrypted redacted
    hidden masked secret sensitive long short weak strong case-sensitive the this that these
    those not now still never always only also just then there here same different shared
    unique random generated managed provided supplied sent passed read loaded fetched pulled
    injected mounted configured defined documented known unknown given entered typed accepted
    rejected ignored used unused reused revoked disabled enabled active inactive visible
    printed logged leaked exposed committed checked verified validated compared cached copied
    removed deleted cleared renewed refreshed issued created updated supposed expected
    optional default defaults change rotate reuse store keep never must should cannot will
    would could might need needs your their our his her its my what which where when how why
    whatever something nothing anything everything someone everyone none null undefined
    present absent available unavailable enough too very quite really usually sometimes often
    part field value variable parameter argument setting option header column env
    environment vault keychain keyring manager file config configuration
    """.split()
)
_CODE_PREFIXES = ("os.", "env.", "process.env", "settings.", "config.", "self.", "secrets.")
_WORD_SUFFIX = re.compile(
    r"(?:ed|ing|ly|able|ible|tion|sion|ment|ness|ive|ous|ful|less|ary|ory|al|ic|ize|ise)$"
)


def _clean_value(value: str) -> str:
    value = value.rstrip(".,;:)]}>»”’\"'`")
    return value.lstrip("".join(_QUOTE_OPEN))


def _password_like(value: str, strict: bool, digits_ok: bool = True) -> bool:
    """A value that reads as a password, not as the word after "the password is"."""
    v = _clean_value(value)
    low = v.lower()
    if not any(c.isalnum() for c in v):
        return False  # ****, a masked value
    if len(v) < 4 or low in _STOP or "redacted:" in low or not patterns.not_lookalike(v):
        return False
    if re.match(r"[A-Za-z_][\w.]*[\[(]", v) or low.startswith(_CODE_PREFIXES):
        return False  # os.environ[...], get_secret(...), settings.db_password
    if low.startswith(("http", "/", "~/", "./", "$", "%", "{", "<", "[redacted")) or "://" in v:
        return False
    if re.fullmatch(r"[a-z]+(?:-[a-z]+)?", v) and "-" in v:
        return False  # short-lived, case-sensitive (a 3+ word passphrase does count)
    if re.fullmatch(r"\d{1,3}(?:\.\d+)?%?", v):
        return False  # 8, 12.5%
    has_digit = any(c.isdigit() for c in v)
    has_symbol = any(not c.isalnum() for c in v)
    mixed = v != v.lower() and v != v.upper() and not v.istitle()
    if v.isdigit():
        return digits_ok and len(v) >= 4
    if re.fullmatch(r"[a-z]+(?:-[a-z]+){2,}", v):
        return not strict or len(v) >= 16  # correct-horse-battery-staple
    if has_digit or has_symbol or mixed:
        return True
    if strict:
        return False
    # A lone lowercase word: a password only if it does not read as an English word.
    return len(v) >= 6 and v.isalpha() and v.islower() and not _WORD_SUFFIX.search(v)


def _prose(text: str) -> Iterable[SecretFinding]:
    low = text.lower()
    if not any(n in low for n in _PROSE_NEEDS):
        return
    for m in _PROSE_AFTER.finditer(text):
        keyword = m.group(1).lower()
        is_pw = re.fullmatch(_PW, keyword) is not None
        value = _clean_value(m.group(2))
        if keyword == "pin":
            ok = value.isdigit() and 4 <= len(value) <= 12
        else:
            ok = _password_like(value, strict=not is_pw) and (is_pw or len(value) >= 8)
        if ok:
            start = m.start(2) + m.group(2).index(value) if value in m.group(2) else m.start(2)
            yield SecretFinding(start, start + len(value), "prose_password")
    for m in _KEYWORD_VALUE.finditer(text):
        value = m.group(1).rstrip(".,;:")
        core = value.replace("-", "").replace("_", "")
        if (
            any(c.isdigit() for c in core)
            and any(c.isalpha() for c in core)
            and entropy(core) >= 3.0
            and patterns.not_lookalike(value)
            and _password_like(value, strict=True) is not False
        ):
            start = m.start(1)
            yield SecretFinding(start, start + len(value), "keyword_secret")
    for m in _CLI_PASSWORD.finditer(text):
        group = next(g for g in range(1, 5) if m.group(g) is not None)
        value = _clean_value(m.group(group))
        if _password_like(value, strict=True):
            start = m.start(group) + max(0, m.group(group).find(value))
            yield SecretFinding(start, start + len(value), "prose_password")
    for regex, group in ((_PROSE_BARE, 1), (_PROSE_BEFORE, 1), (_LOGIN, 2), (_USER_PASS_HOST, 1)):
        for m in regex.finditer(text):
            value = _clean_value(m.group(group))
            # "user id 1001", "account 42": a number after a name is an id, not a password.
            if value and _password_like(value, strict=True, digits_ok=regex is not _LOGIN):
                start = m.start(group) + max(0, m.group(group).find(value))
                yield SecretFinding(start, start + len(value), "prose_password")


# --- generic tokens ---------------------------------------------------------------------
# `shpat_…`, `dop_v1_…`, `acme-live-…`: a short lowercase prefix, then a random tail.
_PREFIXED = re.compile(
    r"(?<![\w-])([a-z][a-z0-9]{1,9}[_-](?:[a-z0-9]{1,10}[_-]){0,2})([A-Za-z0-9]{20,}[A-Za-z0-9_-]*)(?![\w-])"
)
_DIGEST_PREFIX = re.compile(
    r"(?i)^(?:sha\d*|md5|hash|digest|commit|rev|id|uuid|etag|h|raw|bf|s)[_-]"
)
_RUN = re.compile(r"(?<![\w+/=.-])([A-Za-z0-9+/_-]{24,}={0,2})(?![\w+/=.-])")


def _transitions(s: str) -> float:
    """Share of neighbouring characters that switch class (upper/lower/digit/other)."""

    def cls(c: str) -> int:
        return 0 if c.isupper() else 1 if c.islower() else 2 if c.isdigit() else 3

    if len(s) < 2:
        return 0.0
    return sum(cls(a) != cls(b) for a, b in zip(s, s[1:], strict=False)) / (len(s) - 1)


def _random_tail(tail: str) -> bool:
    core = tail.replace("_", "").replace("-", "")
    if len(core) < 20 or not patterns.not_lookalike(core):
        return False
    if re.fullmatch(r"[0-9a-f]+", core):
        return len(core) >= 32 and any(c.isdigit() for c in core) and entropy(core) >= 3.0
    return classes(core) >= 2 and entropy(core) >= 3.6 and _transitions(core) >= 0.3


def _generic(text: str) -> Iterable[SecretFinding]:
    for m in _PREFIXED.finditer(text):
        if not _DIGEST_PREFIX.match(m.group(1)) and _random_tail(m.group(2)):
            yield SecretFinding(m.start(), m.end(), "prefixed_token")
    for m in _RUN.finditer(text):
        run = m.group(1).rstrip("=")
        if re.fullmatch(r"[0-9a-fA-F]+", run) or not patterns.not_lookalike(run):
            continue  # hex digests (commits, content hashes) are everywhere in lessons
        digits = sum(c.isdigit() for c in run)
        if (
            classes(run) == 3
            and digits >= 2
            and entropy(run) >= 4.0
            and _transitions(run) >= 0.4
            and "/" not in run.strip("/")[:1]
        ):
            yield SecretFinding(m.start(1), m.end(1), "high_entropy_token")
        elif (
            classes(run) == 2
            and len(run) >= 32
            and run.isalnum()
            and re.search(r"[g-zG-Z]", run)
            and digits >= 4
            and entropy(run) >= 4.0
            and _transitions(run) >= 0.4
        ):
            yield SecretFinding(m.start(1), m.end(1), "high_entropy_token")


# --- decoded segments -------------------------------------------------------------------
_B64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{12,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){6,}(?![0-9A-Fa-f])")
_WORD = re.compile(r"(?<!\S)\S{6,}")  # whitespace-delimited runs: linear, no backtracking
_ESCAPE_MARK = re.compile(
    r"%[0-9A-Fa-f]{2}|\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|&#x?[0-9A-Fa-f]+;|&[a-z]+;"
)


def _text_of(raw: bytes) -> str | None:
    """Decoded bytes as text, if they are mostly printable UTF-8 (not random key bytes)."""
    try:
        s = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(c.isprintable() or c in "\n\r\t" for c in s)
    return s if s and printable >= 0.95 * len(s) else None


def _b64(run: str) -> str | None:
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    alt = "-_" if ("-" in body or "_" in body) else "+/"
    try:
        return _text_of(base64.b64decode(padded, altchars=alt.encode(), validate=True))
    except (binascii.Error, ValueError):
        return None


def _unescape(run: str) -> str:
    out = unquote_plus(run) if "%" in run else run
    if "\\x" in out or "\\u" in out:
        out = re.sub(r"\\x([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), out)
        out = re.sub(r"\\u([0-9A-Fa-f]{4})", lambda m: chr(int(m.group(1), 16)), out)
    return html.unescape(out) if "&" in out else out


def _decoded(text: str, depth: int) -> Iterable[SecretFinding]:
    for m in _B64.finditer(text):
        decoded = _b64(m.group(0))
        if decoded and decoded != m.group(0) and _scan(decoded, depth + 1):
            yield SecretFinding(m.start(), m.end(), "encoded_secret")
    for m in _HEX.finditer(text):
        decoded = _text_of(bytes.fromhex(m.group(0)))
        if decoded and _scan(decoded, depth + 1):
            yield SecretFinding(m.start(), m.end(), "encoded_secret")
    if any(mark in text for mark in ("%", "\\x", "\\u", "&")):
        for m in _WORD.finditer(text):
            if not _ESCAPE_MARK.search(m.group(0)):
                continue
            decoded = _unescape(m.group(0))
            if decoded != m.group(0) and _scan(decoded, depth + 1):
                yield SecretFinding(m.start(), m.end(), "encoded_secret")


# --- normalised copy --------------------------------------------------------------------
def _normalised(text: str) -> tuple[str, list[int]]:
    """NFKC with format characters (zero-width, bidi, soft hyphen) dropped, and for each
    character of the result the offset it came from."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch) == "Cf":
            continue
        for c in unicodedata.normalize("NFKC", ch):
            out.append(c)
            where.append(i)
    return "".join(out), where


_MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")


def _scan(text: str, depth: int) -> list[SecretFinding]:
    if "[REDACTED:" in text:
        # Our own markers read as placeholders (same length, so offsets hold): the text
        # around them is scanned, the marker never matches as a value.
        text = _MARKER.sub(lambda m: "*" * len(m.group(0)), text)
    found = [
        *patterns.known_formats(text),
        *_prose(text),
        *_generic(text),
    ]
    if depth < MAX_DEPTH:
        found.extend(_decoded(text, depth))
    if depth == 0 and not text.isascii():
        norm, where = _normalised(text)
        if norm != text:
            for f in _scan(norm, MAX_DEPTH):
                found.append(SecretFinding(where[f.start], where[f.end - 1] + 1, f.kind))
    return merge(found)


def _with_repeats(text: str, found: list[SecretFinding]) -> list[SecretFinding]:
    # A value found in context ("password=hunter2x") can repeat bare elsewhere; redact
    # every copy, or the redacted text still leaks it.
    extra = []
    seen: set[str] = set()
    for f in found:
        value = text[f.start : f.end]
        if len(value) >= 4 and value not in seen:
            seen.add(value)
            at = text.find(value)
            while at != -1:
                if at != f.start:
                    extra.append(SecretFinding(at, at + len(value), f.kind))
                at = text.find(value, at + 1)
    return merge(found + extra) if extra else found


def find_secrets(text: str) -> list[SecretFinding]:
    """Every secret in `text`, as non-overlapping spans sorted by position."""
    return _with_repeats(text, _scan(text, 0)) if text else []


def redact_spans(text: str, findings: Sequence[SecretFinding]) -> str:
    """`text` with each finding replaced by `[REDACTED:<kind>]`."""
    parts: list[str] = []
    pos = 0
    for f in merge(findings):
        parts.append(text[pos : f.start])
        parts.append(f"[REDACTED:{f.kind}]")
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts)


def redact(text: str, findings: Sequence[SecretFinding] | None = None) -> str:
    """`text` with every secret redacted, re-scanned until clean.

    `findings` (e.g. from `scan_fields`, which sees across fields) are redacted first.
    A text still not clean after a few rounds is replaced whole.
    """
    found = list(findings) if findings is not None else find_secrets(text)
    for _ in range(MAX_PASSES):
        if not found:
            return text
        text = redact_spans(text, found)
        found = find_secrets(text)
    return "[REDACTED:unscannable]" if found else text


def scan_fields(fields: Sequence[tuple[str, str]]) -> dict[str, list[SecretFinding]]:
    """Findings per field name, including secrets split across neighbouring fields.

    Each seam between two neighbouring non-empty fields is scanned as one text, joined
    without a separator (a token cut in two) and with a space (prose: "the password is"
    at the end of one, the value at the start of the next).
    """
    present = [(name, text) for name, text in fields if text]
    # No secret fits in a few characters; short fields (a namespace, a tag) still count
    # through the seams below.
    out = {name: find_secrets(text) if len(text) >= 8 else [] for name, text in present}
    for (na, a), (nb, b) in zip(present, present[1:], strict=False):
        # A token cut in two: the token characters that end one field and start the next.
        tail = _TOKEN_END.search(a[-SEAM:])
        head = _TOKEN_START.match(b[:SEAM])
        seams = []
        if tail and head and tail.group(0) and head.group(0):
            if len(tail.group(0)) + len(head.group(0)) >= 12:
                seams.append((tail.group(0), "", head.group(0)))
        # A value set up at the end of one field ("the password is") and given in the next.
        left = a[-SEAM:]
        if any(cue in left.lower() for cue in _SEAM_CUES):
            seams.append((left, " ", b[:SEAM]))
        for lpart, sep, rpart in seams:
            offset = len(a) - len(lpart)
            cut = len(lpart) + len(sep)
            # Glued, only the known formats count: prose needs its spaces ("fieldThe" is
            # two words) and a generic run would swallow the neighbour's last word.
            joined = lpart + sep + rpart
            for f in patterns.known_formats(joined) if sep == "" else find_secrets(joined):
                if f.start < len(lpart):
                    end = offset + min(f.end, len(lpart))
                    out[na].append(SecretFinding(offset + f.start, end, f.kind))
                if f.end > cut:
                    out[nb].append(SecretFinding(max(0, f.start - cut), f.end - cut, f.kind))
    return {name: merge(fs) for name, fs in out.items() if fs}


def fingerprint(key: bytes, text: str) -> str:
    """HMAC-SHA256 hex of the UTF-8 text under the install's key.

    Lets a reject record match a resubmission without letting anyone who reads the
    store test guesses against it (an unkeyed SHA-256 gave `hunter2` back in six tries).
    """
    return hmac.new(key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def keyed_id(key: bytes, data: bytes) -> str:
    """An event id for a refused event whose own id would leak: `s-` + keyed digest."""
    return "s-" + hmac.new(key, data, hashlib.sha256).hexdigest()[:40]

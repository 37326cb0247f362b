"""Secret detection and redaction for capture events. Pure: no I/O, no global state.

`find_secrets(text)` runs, over one string:

1. the known formats and `key = value` shapes of `memsieve.capture.patterns` (our own
   patterns plus detect-secrets' plugin regexes);
2. credentials in prose (`memsieve.capture.prose`): "the password is hunter3x", "login admin / S3cr3t!",
   "use Tr0ub4dor as the password", `bob:Hunter42@host` (detect-secrets' keyword plugin
   only reads assignments; nobody writes lessons in `key=value`); wallet seed phrases by
   their words alone (`seeds`); hex and UUID keys their sentence or table row names
   (`keyed`);
3. generic tokens: a vendor-style prefix with a random tail, or a long mixed-case
   random-looking run, so formats nobody listed are still caught;
4. decoded segments: base64, hex, URL-encoding and backslash/HTML escapes are decoded
   and scanned again (two levels deep); a hit redacts the whole encoded run;
5. a normalised copy (NFKC, zero-width and bidi characters removed) when the text is
   not ASCII, so `ghp_` with a zero-width space inside is still a GitHub token; and a
   copy with wrapped values joined again (a token a narrow terminal cut over two lines).

A finding inside a value that is no secret by construction (ciphertext, a reference, a
mask, public key material: `memsieve.capture.benign`) is dropped.

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
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from urllib.parse import unquote_plus

from memsieve.capture import (
    benign,
    credshapes,
    fastre,
    keyed,
    lookalikes,
    nearby,
    patterns,
    prose,
    seeds,
)
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

# --- generic tokens ---------------------------------------------------------------------
# `shpat_…`, `dop_v1_…`, `acme-live-…`: a short lowercase prefix, then a random tail.
_PREFIXED = re.compile(
    r"(?<![\w-])([a-z][a-z0-9]{1,9}[_-](?:[a-z0-9]{1,10}[_-]){0,2})([A-Za-z0-9]{20,}[A-Za-z0-9_-]*)(?![\w-])"
)
_RUN = re.compile(r"(?<![\w+/=.-])([A-Za-z0-9+/_-]{24,}={0,2})(?![\w+/=.-])")
# Twelve token characters in a row: what every generic token, base64 run and hex run
# holds (`_PREFIXED`, `_RUN`, `_B64`, `_HEX`); a lesson of ordinary words has none.
_TOKENISH = re.compile(r"[A-Za-z0-9+/_-]{12}")


def _transitions(s: str) -> float:
    """Share of neighbouring characters that switch class (upper/lower/digit/other)."""

    def cls(c: str) -> int:
        return 0 if c.isupper() else 1 if c.islower() else 2 if c.isdigit() else 3

    if len(s) < 2:
        return 0.0
    return sum(cls(a) != cls(b) for a, b in zip(s, s[1:], strict=False)) / (len(s) - 1)


# A ULID (26 characters of Crockford base32, a millisecond timestamp first): the id format
# of events, sessions and memories (`evt-01J5CG8…`, `mem_01JDW0…`), never a credential.
_ULID = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}", re.IGNORECASE)  # case-insensitive, per its spec


def _random_tail(tail: str) -> bool:
    core = tail.replace("_", "").replace("-", "")
    if _ULID.fullmatch(core):
        return False
    if len(core) < 20 or not patterns.not_lookalike(core):
        return False
    if re.fullmatch(r"[0-9a-f]+", core):
        return len(core) >= 32 and any(c.isdigit() for c in core) and entropy(core) >= 3.0
    return classes(core) >= 2 and entropy(core) >= 3.6 and _transitions(core) >= 0.3


def _generic(text: str) -> Iterable[SecretFinding]:
    for m in _PREFIXED.finditer(text):
        if not lookalikes.DIGEST_PREFIX.match(m.group(1)) and _random_tail(m.group(2)):
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


def _random_runs(text: str) -> list[SecretFinding]:
    return [f for f in _generic(text) if f.kind == "high_entropy_token"]


# --- decoded segments -------------------------------------------------------------------
_B64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{12,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){6,}(?![0-9A-Fa-f])")
_WORD = re.compile(r"(?<!\S)\S{6,}")  # whitespace-delimited runs: linear, no backtracking
_ESCAPE_MARK = re.compile(
    r"\\/|%[0-9A-Fa-f]{2}|\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|&#x?[0-9A-Fa-f]+;|&[a-z]+;"
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
    out = out.replace("\\/", "/")  # JSON's escaped slash: https:\/\/host
    return html.unescape(out) if "&" in out else out


def _decoded(text: str, depth: int, runs: bool) -> Iterable[SecretFinding]:
    """`runs`: whether `text` holds a `_TOKENISH` run (else no base64 or hex is in it)."""
    for m in _B64.finditer(text) if runs else ():
        decoded = _b64(m.group(0))
        if (
            decoded
            and decoded != m.group(0)
            and (credshapes.decoded_credential(decoded) or _scan(decoded, depth + 1))
        ):
            yield SecretFinding(m.start(), m.end(), "encoded_secret")
    for m in _HEX.finditer(text) if runs else ():
        decoded = _text_of(bytes.fromhex(m.group(0)))
        if decoded and _scan(decoded, depth + 1):
            yield SecretFinding(m.start(), m.end(), "encoded_secret")
    if any(mark in text for mark in ("%", "\\x", "\\u", "&", "\\/")):
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
    low = fastre.lowered(text)
    runs = _TOKENISH.search(text) is not None
    found = [
        *patterns.known_formats(text, low),
        *prose.findings(text, low),
        *nearby.findings(text, low),
        *credshapes.findings(text, low),
        *seeds.findings(text),
        *keyed.findings(text),
        *(_generic(text) if runs else ()),
    ]
    public = lookalikes.public_spans(text) if found else []
    found = [f for f in found if not lookalikes.public_or_id(text, f, _b64, public)]
    if depth < MAX_DEPTH:
        found.extend(_decoded(text, depth, runs))
    # Ciphertext, references and public values (memsieve.capture.benign) are kept.
    safe = benign.spans(text) if found else []
    if safe:
        found = [f for f in found if not benign.inside(f, safe)]
    if depth == 0 and "\n" in text:
        found.extend(_unwrapped(text))
    if depth == 0 and not text.isascii():
        norm, where = _normalised(text)
        if norm != text:
            for f in _scan(norm, MAX_DEPTH):
                found.append(SecretFinding(where[f.start], where[f.end - 1] + 1, f.kind))
    return merge(found)


# A value a terminal or a narrow pane wrapped: a line that is one run of token characters,
# after a line that ends in one ("DOPPLER_TOKEN=dp.pt.EKm70caTb…" / "r3NRrShzr7Ox…").
_WRAP = re.compile(r"\n[ \t]*(?=[A-Za-z0-9+/=_.%-]{4,}[ \t]*(?:\r?\n|$))")
_LAST_WORD = re.compile(r"[A-Za-z0-9+/=_.%:-]{8,}$")
_EMPTY_KEY = re.compile(r"(?:^|[\s\"'])[A-Za-z_][\w.-]*[=:]$")
_KEY_LINE = re.compile(r"[A-Za-z_][\w.-]*[=:]")  # an assignment starts the line


def _unwrapped(text: str) -> list[SecretFinding]:
    """Findings of the text with its wrapped values joined again, where one crosses a join
    (a value found whole on one line is the plain scan's)."""
    joins = [
        m.span()
        for m in _WRAP.finditer(text)
        if _LAST_WORD.search(text, max(0, m.start() - 256), m.start())
        # Not an empty assignment above or a key below: `STRIPE_KEY=` / `SENDGRID_KEY=`.
        and not _EMPTY_KEY.search(text, max(0, m.start() - 256), m.start())
        and not _KEY_LINE.match(text, m.end())
    ]
    if not joins:
        return []
    parts, marks, pos = [], [], 0  # marks: (offset in the joined text, characters removed)
    for start, end in joins:
        parts.append(text[pos:start])
        marks.append((sum(map(len, parts)), end - start))
        pos = end
    parts.append(text[pos:])
    joined = "".join(parts)

    def back(i: int, inclusive: bool) -> int:
        return i + sum(n for at, n in marks if at < i or (inclusive and at == i))

    return [
        SecretFinding(back(f.start, True), back(f.end, False), f.kind)
        for f in _scan(joined, MAX_DEPTH)
        if any(f.start < at < f.end for at, _ in marks)
    ]


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


# Fields this short (namespaces, tags, agent and session names) repeat from event to
# event: their findings are remembered, per process, for the most recent few thousand.
SHORT = 64


@lru_cache(maxsize=4096)
def _find_short(text: str) -> tuple[SecretFinding, ...]:
    return tuple(find_secrets(text))


def scan_fields(fields: Sequence[tuple[str, str]]) -> dict[str, list[SecretFinding]]:
    """Findings per field name, including secrets split across neighbouring fields.

    Each seam between two neighbouring non-empty fields is scanned as one text, joined
    without a separator (a token cut in two) and with a space (prose: "the password is"
    at the end of one, the value at the start of the next).
    """
    present = [(name, text) for name, text in fields if text]
    # No secret fits in a few characters; short fields (a namespace, a tag) still count
    # through the seams below.
    out = {
        name: (list(_find_short(text)) if len(text) <= SHORT else find_secrets(text))
        if len(text) >= 8
        else []
        for name, text in present
    }
    for name, text in present:
        if name.startswith("tags[") and not out[name] and _tag_token(text):
            out[name] = [SecretFinding(0, len(text), "prefixed_token")]
    for (na, a), (nb, b) in zip(present, present[1:], strict=False):
        # A token cut in two: the token characters that end one field and start the next.
        tail = _TOKEN_END.search(a[-SEAM:])
        head = _TOKEN_START.match(b[:SEAM])
        seams: list[tuple[str, str, str, Callable[[str], Iterable[SecretFinding]]]] = []
        if tail and head and tail.group(0) and head.group(0):
            if len(tail.group(0)) + len(head.group(0)) >= 12:
                seams.append((tail.group(0), "", head.group(0), patterns.known_formats))
            if (
                na.startswith("tags[")
                and nb.startswith("tags[")
                and (a, b) == (tail.group(0), head.group(0))
                and not (lookalikes.DIGEST_PREFIX.match(a) or lookalikes.DIGEST_PREFIX.match(b))
                and not (_PLAIN_TAG.fullmatch(a) or _PLAIN_TAG.fullmatch(b))
            ):
                # Two whole tags of token characters (a value a tagger cut at its length
                # limit): no word of a sentence to swallow, so a random run counts too.
                seams.append((a, "", b, _random_runs))
        # A value set up at the end of one field ("the password is") and given in the next.
        left = a[-SEAM:]
        if any(cue in left.lower() for cue in _SEAM_CUES):
            seams.append((left, " ", _whole_words(b, SEAM), find_secrets))
        if (
            tail
            and head
            and min(len(tail.group(0)), len(head.group(0))) >= 4
            and tail.group(0)[-1].isalnum()
            and nearby.names_a_credential(left)
        ):
            # A value cut in two, read with the words before it ("credential for qa:
            # w2Ey8z" + "bESUi6…"): a strong value near a credential's name.
            seams.append((left, "", b[:SEAM], nearby.findings))
        for lpart, sep, rpart, scan in seams:
            offset = len(a) - len(lpart)
            cut = len(lpart) + len(sep)
            # Glued, only the known formats count (and a strong value after a credential's
            # name): prose needs its spaces ("fieldThe" is two words) and a generic run
            # would swallow the neighbour's last word.
            found = list(scan(lpart + sep + rpart))
            for f in found:
                if f.end <= len(lpart):
                    continue  # inside the left field: its own scan, with all its context, decides
                if (
                    nb == "namespace"
                    and f.start < len(lpart)
                    and _covered(out[na], offset + f.start, len(a))
                ):
                    # The field before found the whole token on its own: the namespace's
                    # token characters after it (`sec3` after an event id) are not part of
                    # it, and a refusal row keeps its namespace (`memsieve events -n`).
                    continue
                if scan is nearby.findings and f.start >= len(lpart):
                    continue  # inside the right field: not cut, and its own scan decides
                if scan is find_secrets and f.start >= cut + _first_words_end(rpart):
                    # A cue at the end of one field names a value at the start of the next
                    # ("the password is" | "hunter2 …"); further on, the next field's own
                    # scan, with all its context, decides.
                    continue
                if scan is _random_runs and (
                    _covered(out[na], offset + f.start, len(a)) or _covered(out[nb], 0, f.end - cut)
                ):
                    continue  # one tag holds a whole token on its own: the other is not part of it
                if f.start < len(lpart):
                    end = offset + min(f.end, len(lpart))
                    out[na].append(SecretFinding(offset + f.start, end, f.kind))
                if f.end > cut:
                    out[nb].append(SecretFinding(max(0, f.start - cut), f.end - cut, f.kind))
    texts = dict(present)
    for name in _ID_FIELDS:
        if name in out:
            # An event id or a session name is random by design (`ce-wkt9l5ygcmwet9evk6c4`,
            # `cap_01jwqqg661…`): a run found by its shape alone counts there only in mixed
            # case, as base62 and base64 tokens are written.
            out[name] = [f for f in out[name] if not _id_like(texts[name][f.start : f.end], f)]
    return {name: merge(fs) for name, fs in out.items() if fs}


# A tag that is a vendor-style prefix and a random tail too short for `_PREFIXED`
# (`hf_Ohtd018N9s2uTbsy`: a token's first half, the rest put elsewhere): a label is words.
_TAG_TOKEN = re.compile(r"([a-z][a-z0-9]{1,9}[_-])([A-Za-z0-9]{12,})")


def _tag_token(tag: str) -> bool:
    m = _TAG_TOKEN.fullmatch(tag)
    if m is None or lookalikes.DIGEST_PREFIX.match(tag) or _ULID.fullmatch(m.group(2)):
        return False
    tail = m.group(2)
    return classes(tail) == 3 and entropy(tail) >= 3.3 and _transitions(tail) >= 0.3


# A tag of words ("config", "flaky-test"): no half of a token, whatever its neighbour is.
_PLAIN_TAG = re.compile(r"[a-z]+(?:[-_][a-z]+)*")


def _first_words_end(text: str, words: int = 3) -> int:
    """Where the first `words` whitespace-delimited words of `text` end."""
    end = 0
    for n, m in enumerate(re.finditer(r"\S+", text)):
        end = m.end()
        if n + 1 >= words:
            break
    return end


def _whole_words(text: str, n: int) -> str:
    """The first `n` characters of `text`, on to the end of the word they cut: a value cut
    in two loses what names it a sample (`…EXAMPLEKEY`) and reads as a fragment."""
    if len(text) <= n:
        return text
    rest = re.match(r"\S{0,256}", text[n:])
    return text[:n] + (rest.group(0) if rest else "")


_ID_FIELDS = ("event_id", "source.session")
# Kinds found by shape alone: a random-looking run, with or without a short prefix.
_SHAPE_ONLY = frozenset({"prefixed_token", "high_entropy_token"})


def _id_like(value: str, f: SecretFinding) -> bool:
    return f.kind in _SHAPE_ONLY and (value == value.lower() or value == value.upper())


def _covered(found: Sequence[SecretFinding], start: int, end: int) -> bool:
    return any(f.start <= start and end <= f.end for f in found)


def fingerprint(key: bytes, text: str) -> str:
    """HMAC-SHA256 hex of the UTF-8 text under the install's key.

    Lets a reject record match a resubmission without letting anyone who reads the
    store test guesses against it (an unkeyed SHA-256 gave `hunter2` back in six tries).
    """
    return hmac.new(key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def keyed_id(key: bytes, data: bytes) -> str:
    """An event id for a refused event whose own id would leak: `s-` + keyed digest."""
    return "s-" + hmac.new(key, data, hashlib.sha256).hexdigest()[:40]

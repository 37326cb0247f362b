"""A credential's value near its name, however the sentence runs between them. Pure.

`memsieve.capture.prose` reads sentences by their grammar ("the password is X", "X is the
password"); lessons are written in many languages and word orders ("La contraseña del
usuario admin de MySQL en preproducción es X", "A senha do usuário bi foi trocada para X",
"report_ro のパスワードが X に変わった", "RDS-Zugangsdaten X im Chat gepostet"). Here the
grammar does not matter: after a word that names a credential, within a few words of the
same sentence, a value that no prose word looks like (a random mix of cases and digits, a
word-digit-symbol password, dashed words ending in digits) is a secret. The value test is
strict because the window is loose.

Credentials known by their shape are in `memsieve.capture.credshapes`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import ahocorasick
from memsieve.capture import fastre, patterns
from memsieve.capture.shapes import CODE_REF, SecretFinding

_PASSWORD_WORDS = (
    "pass password passphrase passcode passwd pwd passwort kennwort mdp contraseña contrasena "
    "senha wachtwoord hasło haslo lösenord losenord salasana heslo parola şifre sifre пароль "
    "密码 密碼 口令 パスワード 비밀번호 pw pwd creds lösenordet losenordet passordet "
    "wachtwoordet पासवर्ड парол"
).split() + ["mot de passe", "wpa key", "wpa2 key", "wpa psk", "wpa2 psk", "wpa2-psk"]
_CREDENTIAL_WORDS = (
    "credential credentials credenziale credenziali credenciales credencial credenciais "
    "identifiant identifiants zugangsdaten anmeldedaten zugangsschlüssel sleutel klucz chiave "
    "clave clé api_key api-key apikey access_key access-key secret_key secret-key key token "
    "secret geheimnis segreto secreto segredo sekret cookie dsn login log-in signin sign-in "
    "recovery recuperación recuperacion récupération recuperation wiederherstellung "
    "wiederherstellungscode wiederherstellungscodes wiederherstellungsschlüssel recupero herstel "
    "herstelcode herstelcodes herstelsleutel odzyskiwania 認証情報 秘密鍵 密钥 密鑰 令牌 トークン "
    "凭据 凭证 認証キー"
).split() + [
    "api key", "access key", "secret key", "connection string", "log in", "sign in",
    "backup code", "backup codes", "codes de secours", "mfa codes", "magic word",
]  # fmt: skip


@lru_cache(maxsize=1)
def _automaton() -> Any:
    """Every name in one Aho-Corasick automaton (pyahocorasick, in C): one pass over a
    lesson finds them all, where a regex of sixty words tried each at every position."""
    auto = ahocorasick.Automaton()
    for words, is_password in ((_PASSWORD_WORDS, True), (_CREDENTIAL_WORDS, False)):
        for w in words:
            auto.add_word(w, (len(w), is_password))
    auto.make_automaton()
    return auto


def _inner(c: str) -> bool:
    return c.isalnum() or c == "_"


_PUBLIC_BEFORE = re.compile(r"(?i)\b(?:site|public|publishable|verification|recipient)[ _-]$")


def _names(text: str, low: str | None) -> Iterable[tuple[int, int, bool]]:
    """(start, end, is a password word) of each credential name, as a word (a CJK name may
    be glued to the word before it: "keystore認証情報"), the longest at each place."""
    if low is None:
        low = text.lower()
        if len(low) != len(text):  # a letter whose lower case is longer: keep it
            low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    hits = sorted(
        ((end + 1 - n, end + 1, pw) for end, (n, pw) in _automaton().iter(low)),
        key=lambda h: (h[0], -h[1]),
    )
    last = -1
    for start, end, pw in hits:
        if start < last:
            continue
        if ord(low[start]) < 0x2E80 and (
            (start and _inner(low[start - 1])) or (end < len(low) and _inner(low[end]))
        ):
            continue
        last = end
        yield start, end, pw


# A word of the window: what lies between spaces, CJK text and punctuation that no
# password of a lesson is cut by.
_WORD = re.compile(
    r"[^\s\u3000-\u30ff\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef\"'“”‘’«»`<>()\[\]{}|,]+"
)
_WINDOW_WORDS = 14
_WINDOW_CHARS = 1024
_SENTENCE_END = re.compile(r"[.!?。！？]$")
_STRONG_SYMBOLS = set("!*^+=$%&#~?@")
_EMAILISH = re.compile(r"@[\w-]+\.[A-Za-z]")  # user@host.example: an address, not a password
_RUNS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+|[^A-Za-z0-9]+")
# Cinder-falcon-garnet-41, Oyster-Anchor-Lemon76, Plum-Lagoon40 (two capitalised words).
_DASHED_WORDS = re.compile(
    r"[A-Za-z]{3,}(?:-[A-Za-z]{3,}){2,}-?\d{1,4}|[A-Z][a-z]{2,}-[A-Z][a-z]{2,}-?\d{1,4}"
)
_SETTING = re.compile(r"[A-Za-z]{3,}=[A-Za-z]")
_LOWER_KEY = re.compile(r"[a-z_][a-z0-9_.-]*=")  # status=201, timeout=30s: a setting
_VERSIONISH = re.compile(r"(?i)v?\d+(?:[.-]\d+)+(?:[-.]?[a-z]+\d*)?")
_APP_PASSWORD = re.compile(r"(?<![\w-])([a-z]{4}([ -])[a-z]{4}\2[a-z]{4}\2[a-z]{4})(?![\w-])")
_GROUPED_KEY = re.compile(r"(?<![\w-])((?:[a-z0-9]{4,6} ){3,}[a-z0-9]{4,6})(?![\w-])")
_CODE_LIST = re.compile(
    r"(?<![\w-])((?:[a-z0-9]{4,6}-[a-z0-9]{4,6}[,;\s]+){3,}[a-z0-9]{4,6}-[a-z0-9]{4,6})"
)


def _setting_or_placeholder(v: str) -> bool:
    """What both value tests leave out: settings (Database=orders;Encrypt=True, status=201),
    an address (user@host.example), and placeholders, ids and sequences (not_lookalike)."""
    return bool(
        ";" in v
        or _SETTING.search(v)
        or _LOWER_KEY.match(v)
        or _EMAILISH.search(v)
        or not patterns.not_lookalike(v)
    )


def strong_value(value: str) -> bool:
    """A value no word of a lesson looks like: a random mix of letter cases and digits,
    a password built of a word, digits and a symbol, or dashed words ending in digits."""
    v = value.rstrip(".,;:")
    if not 8 <= len(v) <= 64 or v[0] in "$%@&#" or "://" in v or "${" in v:
        return False
    if v.count("/") > 1 or ":" in v or "\\" in v or _setting_or_placeholder(v):
        return False
    if _DASHED_WORDS.fullmatch(v):
        return True  # Cinder-falcon-garnet-41
    if _VERSIONISH.fullmatch(v) or v.startswith("/"):
        return False
    letters = sum(c.isalpha() for c in v)
    digits = sum(c.isdigit() for c in v)
    upper = any(c.isupper() for c in v)
    lower = any(c.islower() for c in v)
    if letters < 3 or digits == 0:
        return False
    if _STRONG_SYMBOLS & set(v.rstrip("=")) or (upper and _STRONG_SYMBOLS & set(v)):
        return True  # Delta8013+sable^, Cedar7690.drift=
    if upper and ("_" in v or "." in v) and re.search(r"[A-Za-z]{3,}\d{2,}[._][A-Za-z]{3,}", v):
        return True  # Thistle1452.mosaic_
    if not (upper and lower):
        return False
    runs = [r for r in _RUNS.findall(v)]
    alpha = [r for r in runs if r.isalpha()]
    # CamelCase names (PostgreSQL15, MySQL8Cluster) are a few long runs; a random
    # mix is many short ones.
    return len(runs) >= 5 and sum(map(len, alpha)) / max(1, len(alpha)) <= 4.0


_DATEISH = re.compile(r"\d{4}-\d\d-\d\d|\d{1,2}:\d\d")


_ACRONYM = re.compile(r"[A-Z]{2,}")
_PRODUCT = re.compile(
    r"(?i)(?:windows|win|ubuntu|debian|centos|rhel|fedora|alpine|macos|ios|android|python|"
    r"py|java|jdk|node|nodejs|postgres|postgresql|pg|mysql|mariadb|redis|kafka|mongo|mongodb|"
    r"office|server|sql|excel|dotnet|net|php|ruby|go|rust|gcc|clang|llvm|vs|xcode|iphone|"
    r"pixel|galaxy|chrome|firefox|safari|edge|kubernetes|k8s|helm|terraform|ansible|elastic|"
    r"elasticsearch|jenkins|gitlab|github|grafana|prometheus|nginx|apache|tomcat|spring)"
    r"[-_. ]?v?\d+(?:[.-]\d+)*"
)


def human_password(value: str) -> bool:
    """What people choose as a password, named as one: a word or two with digits and maybe
    a symbol (Winter2026!, PenguinOps19, orchard1051Hickory, November.2023). Read only
    after a password's own name: alone, `Windows11` or `Postgres15` would match."""
    v = value.rstrip(".,;:")
    if not 8 <= len(v) <= 40 or v[0] in "-$%&#<{[(" or any(c in v for c in "/:\\\"'`"):
        return False
    if _DATEISH.search(v) or _VERSIONISH.fullmatch(v) or CODE_REF.fullmatch(v):
        return False
    if _setting_or_placeholder(v) or not v.isascii():
        return False
    has_digit = any(c.isdigit() for c in v)
    has_alpha = sum(c.isalpha() for c in v) >= 3
    symbol = bool(_STRONG_SYMBOLS & set(v))
    if not symbol and (_ACRONYM.search(v) or _PRODUCT.fullmatch(v)):
        return False  # PostgreSQL15, Windows11, Ubuntu2204: a product and its version
    return has_digit and has_alpha and (symbol or any(c.isupper() for c in v))


def _window(text: str, start: int) -> Iterable[re.Match[str]]:
    """The words after `start`, up to the window's size or the sentence's end."""
    pos = start
    # 14 words of a lesson fit in far less: bounded, so that a field of thousands of
    # credential names with no space between them ("pw:pw:…") is read in linear time.
    for n, m in enumerate(_WORD.finditer(text, start, start + _WINDOW_CHARS)):
        if n >= _WINDOW_WORDS or "\n\n" in text[pos : m.start()]:
            return
        yield m
        pos = m.end()
        if _SENTENCE_END.search(m.group(0)) and not strong_value(m.group(0)):
            # A sentence ends where a capital, a new line or the text follows: "pw? ping
            # me for... actually it's X" runs on.
            after = text[pos : pos + 3].lstrip(" \t")
            if not after or after[0] == "\n" or after[0].isupper():
                return


def _after_names(text: str, low: str | None) -> Iterable[SecretFinding]:
    for name_start, name_end, is_password in _names(text, low):
        if _PUBLIC_BEFORE.search(text, max(0, name_start - 16), name_start):
            continue  # a site, public or publishable key is public by design
        rest = text[name_end : name_end + 200]
        if is_password:
            # An app password is named once and given a sentence later.
            app = re.search(r"(?i)app(?:lication)?[ -](?:specific[ -])?$", text[:name_start])
            for shape in (_APP_PASSWORD, _GROUPED_KEY):
                m = shape.search(rest[: 200 if app else 60])
                if m and (shape is _APP_PASSWORD or _mixed_groups(m.group(1))):
                    yield SecretFinding(
                        name_end + m.start(1), name_end + m.end(1), "prose_password"
                    )
        else:
            m = _GROUPED_KEY.search(rest[:80]) or _CODE_LIST.search(rest[:120])
            if m and _mixed_groups(m.group(1)):
                yield SecretFinding(name_end + m.start(1), name_end + m.end(1), "grouped_secret")
        for n, word in enumerate(_window(text, name_end)):
            value = word.group(0).rstrip(".,;:。")
            if strong_value(value) or (is_password and human_password(value)):
                kind = "prose_password" if is_password else "credential_value"
                yield SecretFinding(word.start(), word.start() + len(value), kind)
                break
            if _DIGEST_WORD.search(value):
                break  # "the token's SHA-256 is <hex>": a digest of it, not it
            if n < 6 and _HEX_KEY.fullmatch(value) and patterns.entropy(value) >= 3.0:
                # Hex is a digest or a commit almost everywhere in lessons; right after a
                # credential's name ("Linode credential for preprod: d6195…") it is a key.
                yield SecretFinding(word.start(), word.start() + len(value), "credential_value")
                break


_HEX_KEY = re.compile(r"[0-9a-f]{32,128}|[0-9A-F]{32,128}")
_DIGEST_WORD = re.compile(
    r"(?i)^(?:sha\S*|md5\S*|hash\S*|digest\S*|checksum\S*|commit\S*|fingerprint\S*|"
    r"hmac\S*|signature\S*|rev\S*|id|ids|uuid|etag\S*|zone|account|project|org|tenant|"
    r"bucket|cluster|request|trace|build|run|job|image)$"
)


def _mixed_groups(run: str) -> bool:
    """Groups of a one-time secret hold letters and digits (not a sentence of words)."""
    groups = re.split(r"[\s,;-]+", run.strip())
    return sum(any(c.isdigit() for c in g) for g in groups) >= max(2, len(groups) // 3) and any(
        c.isalpha() for c in run
    )


def findings(text: str, low: str | None = None) -> Iterable[SecretFinding]:
    """`low`: `memsieve.capture.fastre.lowered(text)`, if the caller has it."""
    yield from _after_names(text, fastre.lowered(text) if low is None else low)


def names_a_credential(text: str) -> bool:
    """Whether `text` holds a credential's name (a password word, "credential", "token" …)."""
    return next(iter(_names(text, fastre.lowered(text))), None) is not None

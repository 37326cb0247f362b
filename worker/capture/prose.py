"""Credentials written in prose: "the password is hunter3x", "login admin / S3cr3t!",
"use Tr0ub4dor as the password", `bob:Hunter42@host`, `mysql -pX`, "API key 3f2c…", in
several languages. Pure.

detect-secrets' keyword plugin reads assignments (`password = "…"`, in code); lessons
are written in sentences, so these patterns read sentences, and a value must look like a
password (digits, symbols, mixed case, or an odd word) rather than the word that follows
"the password is" in a lesson about passwords ("required", "rotated", "case-sensitive").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memsieve.capture import fastre, lookalikes, patterns
from memsieve.capture.patterns import SecretFinding, entropy
from memsieve.capture.shapes import CODE_REF, masked

_PW = (
    r"(?:pass(?:word|phrase|code|wd)?|pwd|pw|pin|passwort|kennwort|mot de passe|mdp|"
    r"contrase[ñn]a|clave|senha|wachtwoord|has[łl]o|l[öo]senord|salasana|heslo|parola|"
    r"[şs]ifre|пароль|密码|密碼|パスワード|비밀번호|kata sandi|kata laluan|jelsz[óo]|passord|"
    r"adgangskode|m[ậa]t kh[ẩa]u|κωδικός|סיסמה|סיסמא|كلمة المرور|كلمة السر|رمز عبور|"
    r"पासवर्ड|รหัสผ่าน)"
)
# "Contraseña nueva: …", "new password: …": a word that says which one, before the value.
_WHICH = (
    r"(?:new|current|temporary|nuev[oa]|actual|neue?s?|aktuelle?s?|nouveau|nouvelle|"
    r"temporaire|nov[oa]|nuov[oa]|baru|nowe|nové|yeni|новый|الجديدة|החדשה)"
)
_TOKEN = (
    r"(?:api[ _-]?(?:key|token|secret)|access[ _-]?(?:key|token)|secret[ _-]?key|"
    r"auth(?:entication)?[ _-]?(?:token|key)|bearer[ _-]?token|private[ _-]?key|"
    r"client[ _-]?secret|session[ _-]?token|refresh[ _-]?token|token|secret)"
)
# A word after a space ("is", "lautet"), a sign with or without one ("=", ":"), or a CJK
# particle: a word glued to the one before is part of it ("values" is no "valu" + "es",
# "Machine-to" no "Machine-" + "to").
_IS = (
    r"(?:\s+(?:is now|was changed to|changed to|is set to|was set to|set to|became|reads|is|was|"
    r"to|are|were|ist|lautet|est|es|era|é|è|är|on|jest)(?!\w)"
    r"|\s*(?:=|:|：|->|=>|—|–|是|为|は|는|은))"
)
# What a credential is of or for, between its name and its value ("the password in
# staging is …", "das Passwort für den Server lautet …", "la contraseña del servidor es …").
_OF = (
    r"(?:for|of|to|on|at|in|from|für|fur|von|vom|im|zum|zur|de|du|des|del|della|di|da|do|"
    r"pour|para|voor|van|för|på|dla)"
)
_ARTICLE = r"(?:the|our|my|your|this|that|den|dem|der|die|das|le|la|les|el|los|las|il|het)"
_QUOTE_OPEN = "\"'“‘`«(["
_VALUE = r"[\"'“‘`«(\[]*([^\s\"'”’`»]{4,128})"
_PROSE_AFTER = re.compile(
    rf"(?i)(?<![A-Za-z0-9_-])({_PW}|{_TOKEN})(?![A-Za-z0-9_-])(?:[ \t]+{_WHICH}(?!\w))?"
    rf"(?:[ \t]+{_OF}[ \t]+(?:{_ARTICLE}[ \t]+)?[^\s,;:]{{1,40}}(?:[ \t]+[^\s,;:=]{{1,30}}){{0,2}})?"
    rf"{_IS}\s*{_VALUE}"
)
# Not psql's `\password ROLE` (sets a password interactively; the value is a role).
# The value on the name's line: "secretKey: password\n  remoteRef:" names a key, then another.
_PROSE_BARE = re.compile(rf"(?i)(?<![\w\\-])(?:password|passwd|pwd|passphrase)[ \t]+{_VALUE}")
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
    r"(?:\bmysql(?:dump|admin)?\b[^\n]*?\s(?:-p|--password[= ])[\"']?([^\s\"'-][^\s\"']{3,})"
    r"|\s(?:-u|--user)\s+[\"']?[^\s:\"']+:[\"']?([^\s\"'@]{4,})"
    r"|\bsshpass\s+-p\s*[\"']?([^\s\"']{4,})"
    r"|\bredis-cli\b[^\n]*?\s-a\s+[\"']?([^\s\"']{4,})"
    r"|\s-(?:src|dest)?(?:storepass|keypass|storepassword)\s+[\"']?([^\s\"']{4,})"
    r"|\bldap\w*\b[^\n]*?\s-w\s+[\"']?([^\s\"']{4,}))"
)
# A wallet's recovery words after their name: "seed phrase: actress allow aisle …".
_SEED_PHRASE = re.compile(
    r"(?i)\b(?:seed|mnemonic|recovery|wallet|secret)\s+(?:phrase|words|mnemonic)\b[^.\n]{0,40}?"
    r"[:\s]\s*[\"'`]?((?:[a-z]{3,8}[ ,]+){11,23}[a-z]{3,8})"
)
# One-time recovery / backup codes listed after their name.
_CODE_LIST = re.compile(
    r"(?i)\b(?:recovery|backup|break-glass|scratch|2fa|mfa)\s+codes?\b[^.\n]{0,40}?[:\s]\s*"
    r"((?:[a-z0-9]{4,6}-?[a-z0-9]{4,6}[,;\s]+(?:and\s+)?){2,}[a-z0-9]{4,6}-?[a-z0-9]{4,6})"
)
_PROSE_NEEDS = (
    "pass", "pwd", "pw", "pin", "token", "secret", "key", "log", "sign", "user", "cred",
    "account", "@", "mdp", "mysql", "-u", "sshpass", "redis-cli", "wort", "contrase", "clave", "senha", "has", "sifre", "şifre",
    "пароль", "密", "パスワード", "비밀번호", "salasana", "heslo", "parola", "senord", "phrase",
    "mnemonic", "codes", "storepass", "keypass", "ldap", "sandi", "laluan", "jelsz", "passord",
    "adgangskode", "khẩu", "khau", "κωδικός", "סיסמ", "كلمة", "رمز", "पासवर्ड", "รหัสผ่าน",
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


_NOT_A_VALUE = re.compile(r"-{1,2}[A-Za-z][\w-]*|[\w.-]+(?:/[\w.-]+)+")  # a flag, a path
_DATE_TIME = re.compile(r"^\d{4}-\d\d-\d\d|^\d{1,2}:\d\d(?::\d\d)?$")
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]{2}")


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
    if _NOT_A_VALUE.fullmatch(v) or CODE_REF.fullmatch(v) or _DATE_TIME.search(v) or _CJK.search(v):
        # a flag (-Message), a path (secret/data/app), a dotted code reference
        # (random_password.db.result), a date or time of a log line, CJK prose
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


# Each regex behind its literals and lower-case twin (memsieve.capture.fastre): a lesson
# that says "pin" runs the two that read "pin", not all nine.
_ORDER = (
    _PROSE_AFTER, _KEYWORD_VALUE, _CLI_PASSWORD, _SEED_PHRASE, _CODE_LIST,
    _PROSE_BARE, _PROSE_BEFORE, _LOGIN, _USER_PASS_HOST,
)  # fmt: skip
_SCANS = fastre.Prefilter([fastre.Scan(rx) for rx in _ORDER])
_AFTER, _KEYWORD, _CLI, _SEED, _CODES, *_ = _SCANS.scans
_LOGIN_SCAN = _SCANS.scans[_ORDER.index(_LOGIN)]
# Words after "user" / "account" that label what follows ("user id U0MZ…", "User
# information: uid=0 euid=0", Celery's banner): not a login name with its password.
_ID_WORDS = frozenset(
    "id ids no number num name names handle information info details data agent group "
    "groups role roles type".split()
)
_VALUE_AFTER = tuple(zip(_SCANS.scans[5:], (1, 1, 2, 1), (True, True, False, True), strict=True))


def findings(text: str, low: str | None = None) -> Iterable[SecretFinding]:
    """Credentials in prose. `low`: `fastre.lowered(text)`, if the caller has it."""
    lowered = text.lower() if low is None else low
    if not any(n in lowered for n in _PROSE_NEEDS):
        return
    asc = fastre.lowered(text) if low is None else low
    hits = {_SCANS.scans[i] for i in _SCANS.candidates(text, asc)}
    for m in _AFTER.finditer(text, asc, True) if _AFTER in hits else ():
        keyword = m.group(1).lower()
        is_pw = re.fullmatch(_PW, keyword) is not None
        if masked(m.group(2)):
            continue  # "token=[FILTERED]&uid=8812": a log's mask, then the next parameter
        value = _clean_value(m.group(2))
        if keyword == "pin":
            ok = value.isdigit() and 4 <= len(value) <= 12
        else:
            ok = _password_like(value, strict=not is_pw) and (is_pw or len(value) >= 8)
        if ok:
            start = m.start(2) + m.group(2).index(value) if value in m.group(2) else m.start(2)
            yield SecretFinding(start, start + len(value), "prose_password")
    for m in _KEYWORD.finditer(text, asc, True) if _KEYWORD in hits else ():
        value = m.group(1).rstrip(".,;:")
        core = value.replace("-", "").replace("_", "")
        if (
            any(c.isdigit() for c in core)
            and any(c.isalpha() for c in core)
            and entropy(core) >= 3.0
            and patterns.not_lookalike(value)
            and not lookalikes.DIGEST_PREFIX.match(value)  # "token run-20260321-1045": an id
            and _password_like(value, strict=True) is not False
        ):
            start = m.start(1)
            yield SecretFinding(start, start + len(value), "keyword_secret")
    for m in _CLI.finditer(text, asc, True) if _CLI in hits else ():
        group = next(g for g in range(1, 7) if m.group(g) is not None)
        value = _clean_value(m.group(group))
        if _password_like(value, strict=True):
            start = m.start(group) + max(0, m.group(group).find(value))
            yield SecretFinding(start, start + len(value), "prose_password")
    for scan in (_SEED, _CODES):
        for m in scan.finditer(text, asc, True) if scan in hits else ():
            if any(c.isdigit() for c in m.group(1)) or scan is _SEED:
                yield SecretFinding(m.start(1), m.end(1), "recovery_secret")
    for scan, group, digits_ok in _VALUE_AFTER:
        for m in scan.finditer(text, asc, True) if scan in hits else ():
            if scan is _LOGIN_SCAN and m.group(1).lower() in _ID_WORDS:
                continue  # "user id U0MZ8GXIULS", "account number 4417": an id
            value = _clean_value(m.group(group))
            # "user id 1001", "account 42": a number after a name is an id, not a password.
            if value and _password_like(value, strict=True, digits_ok=digits_ok):
                start = m.start(group) + max(0, m.group(group).find(value))
                yield SecretFinding(start, start + len(value), "prose_password")

"""The scanner's and the policy's outputs over every corpus we have, as digests.

A change that is meant to make the secret scanner or the capture policy faster must give
byte-identical outputs: findings (kind and offsets) per text and per field, redacted
text, and verdicts with their reasons and details. `digests()` computes one SHA-256 per
corpus; `tests/data/scan_digests.json` holds the digests of the implementation they were
first taken from (`tests/unit/test_scan_identical.py` compares).

    python -m tests.support.scan_outputs            # compare with the committed digests
    python -m tests.support.scan_outputs --write    # after a change that *means* to change outputs
    python -m tests.support.scan_outputs --dump DIR # one JSON line per output, to diff two versions

Corpora: the secret corpora, the policy samples, the headline bench's events, PAWS
sentences, the gate pair files' texts, and generated text (random, long runs, Unicode
tricks, encoded secrets, prose around keywords, secrets cut across fields).
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import hashlib
import json
import random
import sys
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memsieve.capture import patterns, policy, secrets
from memsieve.schemas.events import CaptureEvent
from pydantic import ValidationError

from tests.support.paths import DATA, ROOT

DIGESTS = DATA / "scan_digests.json"
PAWS = ROOT.parent / "shared" / "data" / "paws"
KEY = b"scan-outputs-key-0123456789abcdef"
CONFIG = policy.PolicyConfig()


def _jsonl(name: str) -> list[dict[str, Any]]:
    path = DATA / name
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


# --- texts ------------------------------------------------------------------------------
def secret_texts() -> list[str]:
    out: list[str] = []
    for name in ("secrets_corpus.jsonl", "secrets_heldout.jsonl", "secrets_heldout2.jsonl"):
        for row in _jsonl(name):
            for key in ("text", "secret", "decoded"):
                if isinstance(row.get(key), str):
                    out.append(row[key])
            for part in row.get("parts") or []:
                if isinstance(part, str):
                    out.append(part)
            event = row.get("event") or {}
            out += [v for v in event.values() if isinstance(v, str)]
            out += [t for t in event.get("tags") or [] if isinstance(t, str)]
            source = event.get("source") or {}
            out += [v for v in source.values() if isinstance(v, str)]
    return out


def policy_texts() -> list[str]:
    return [t for row in _jsonl("policy_samples.jsonl") for t in (row["heading"], row["content"])]


# The pair files the digests were taken over, by name: a pair file added later (a new
# held-out split) is not part of the recorded corpus.
PAIR_FILES = (
    "eval_pairs.jsonl",
    "gate_pairs_frozen3.jsonl",
    "gate_pairs_frozen4.jsonl",
    "gate_pairs_frozen_test.jsonl",
    "gate_pairs_train4.jsonl",
    "gate_pairs_train5.jsonl",
)


def pair_texts() -> list[str]:
    out: list[str] = []
    for name in PAIR_FILES:
        for row in _jsonl(name):
            out += [row[k] for k in ("a", "b") if isinstance(row.get(k), str)]
    return out


def paws_texts() -> list[str]:
    out: list[str] = []
    for path in sorted(PAWS.glob("*.tsv")):
        for line in path.read_text("utf-8").splitlines()[1:]:
            cols = line.split("\t")
            if len(cols) >= 3:
                out += cols[1:3]
    return out


def bench_events() -> list[dict[str, Any]]:
    from bench.harness import make_events

    return make_events(5000, 20)


# Secret values to encode, hide and cut: every `secret` of the corpora.
def _secrets() -> list[str]:
    out = []
    for name in ("secrets_heldout.jsonl", "secrets_heldout2.jsonl"):
        out += [r["secret"] for r in _jsonl(name) if isinstance(r.get("secret"), str)]
    return sorted(set(out))


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_B64 = _ALNUM + "+/_-="
_TRICKS = "\u200b\u200c\u200d\u2060\ufeff\u202e\u00ad\u017f\u212a\u0130\u0131\uff41\uff21\uff10"
_UNICODE = "éüßøæçñ日本語密码пароль한국어🙂\u0301\u0308ΩΣ" + _TRICKS
_WORDS = (
    "the password is was set to token secret key api access auth bearer basic login user "
    "account creds pin passphrase mysql -p -u sshpass redis-cli -a ldap seed phrase recovery "
    "codes AKIA ghp_ sk- xoxb- eyJ https:// @ : = := => \" ' ` [REDACTED:x] -----BEGIN "
    "PRIVATE KEY----- AccountKey= sig= Authorization: Bearer lesson always never because "
    "deploy cache retry the fix was to check release cluster next time"
).split()


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _encodings(s: str) -> list[str]:
    raw = s.encode("utf-8")
    return [
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        raw.hex(),
        raw.hex().upper(),
        urllib.parse.quote(s, safe=""),
        urllib.parse.quote_plus(s),
        "".join(f"\\x{b:02x}" for b in raw),
        "".join(f"\\u{ord(c):04x}" for c in s if ord(c) < 0x10000),
        "".join(f"&#x{ord(c):x};" for c in s),
        s.replace("/", "\\/"),
        base64.b64encode(urllib.parse.quote(s, safe="").encode()).decode(),
        base64.b64encode(base64.b64encode(raw)).decode(),
    ]


def generated_texts(seed: int = 16) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    for n in (1, 7, 12, 24, 40, 96, 300, 1200, 4000):  # random printable text
        for _ in range(6):
            out.append(_rand(rng, "".join(map(chr, range(32, 127))) + "\n\t", n))
    for alphabet in (_ALNUM, _B64, "0123456789abcdef", "a", "A1", "=:", " -", "%2F", "\\x4"):
        for n in (11, 12, 19, 20, 23, 24, 31, 32, 40, 52, 64, 200, 3000):  # long runs
            out.append(_rand(rng, alphabet, n))
            out.append(f"key: {_rand(rng, alphabet, n)} and more")
    for _ in range(300):  # words, keywords, values and Unicode tricks in any order
        parts = []
        for _ in range(rng.randint(3, 40)):
            r = rng.random()
            if r < 0.5:
                parts.append(rng.choice(_WORDS))
            elif r < 0.7:
                parts.append(_rand(rng, _ALNUM + "!#$%&*", rng.randint(4, 40)))
            elif r < 0.85:
                parts.append(_rand(rng, _UNICODE + _ALNUM, rng.randint(1, 12)))
            else:
                parts.append(rng.choice(_TRICKS))
        out.append(rng.choice(("", " ", "\n", "", "")).join(parts))
    values = _secrets()
    for value in values:  # each secret encoded, hidden, re-cased, cut
        out += [f"the lesson: {e} was in the log" for e in _encodings(value)]
        at = rng.randint(0, len(value))
        trick = rng.choice(_TRICKS)
        out.append(f"Never paste {value[:at]}{trick}{value[at:]} into chat.")
        out.append(f"Never paste {value.swapcase()} into chat.")
        out.append(value * 3)
        out.append(f"{value} {value}[REDACTED:x]{value}")
    for kw in ("password", "pwd", "token", "api key", "secret", "login", "pin", "Passwort"):
        for verb in ("is", "was set to", ":", "=", "->", "is now"):
            for value in ("hunter2x", "Tr0ub4dor&3", "required", "12345678", "rotated", "x" * 30):
                out.append(f"The {kw} {verb} {value} for the staging box.")
                out.append(f"{kw.upper()}{verb}'{value}'")
    return out


# --- events -----------------------------------------------------------------------------
def _event(fields: dict[str, Any]) -> CaptureEvent | None:
    try:
        return CaptureEvent.model_validate(fields)
    except (ValidationError, ValueError, TypeError):
        return None


def corpus_events() -> list[dict[str, Any]]:
    out = []
    for name in ("secrets_heldout.jsonl", "secrets_heldout2.jsonl"):
        out += [dict(r["event"]) for r in _jsonl(name) if isinstance(r.get("event"), dict)]
    for row in _jsonl("policy_samples.jsonl"):
        fields = {k: v for k, v in row.items() if k not in ("expected", "note")}
        fields.setdefault("namespace", "acme")
        out.append(fields)
    return out


def pair_events() -> list[dict[str, Any]]:
    """Pair texts as heading and content, with tags, and one event per pair."""
    out = []
    texts = pair_texts()
    for i in range(0, len(texts) - 1, 2):
        out.append(
            {
                "namespace": f"pairs-{i % 7}",
                "kind": ("retro", "correction", "failure", "pattern")[i % 4],
                "heading": texts[i][:120],
                "content": texts[i + 1],
                "tags": texts[i].split()[:3],
                "event_id": f"pair-{i}",
            }
        )
    return out


def cut_events(seed: int = 17) -> list[dict[str, Any]]:
    """Secrets and prose credentials cut across neighbouring fields at every kind of seam."""
    rng = random.Random(seed)
    out = []
    values = _secrets()
    for n, value in enumerate(values):
        at = rng.randint(1, max(1, len(value) - 1))
        left, right = value[:at], value[at:]
        base = {"namespace": "cut-ns", "kind": "retro", "event_id": f"cut-{n}"}
        out.append({**base, "heading": f"Deploy note {left}", "content": f"{right} was rotated."})
        out.append(
            {**base, "heading": "Staging", "content": "the password is", "tags": [value[:40]]}
        )
        out.append(
            {**base, "heading": "Tags", "content": "see tags for details", "tags": [left, right]}
        )
        out.append(
            {
                **base,
                "heading": "Source",
                "content": f"The fix was to pin {left}",
                "source": {"agent": right[:64] or "a", "session": "sess-1"},
            }
        )
    for _ in range(200):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(4, 30))]
        cut = rng.randint(0, len(words))
        out.append(
            {
                "namespace": "mixed",
                "kind": "failure",
                "heading": " ".join(words[:cut]) or "h",
                "content": " ".join(words[cut:]) + " because the cache broke",
                "tags": [w for w in words[:3] if len(w) < 60],
            }
        )
    return out


# --- outputs ----------------------------------------------------------------------------
def _spans(found: list[secrets.SecretFinding]) -> list[list[Any]]:
    return [[f.start, f.end, f.kind] for f in found]


def text_outputs(text: str) -> dict[str, Any]:
    found = secrets.find_secrets(text)
    return {
        "find": _spans(found),
        "redact": secrets.redact(text, found),
        "known": _spans(patterns.known_formats(text)),
    }


def event_outputs(fields: dict[str, Any]) -> dict[str, Any]:
    event = _event(fields)
    if event is None:
        return {"invalid": True}
    found = secrets.scan_fields(policy.event_fields(event))
    verdict = policy.evaluate(event, CONFIG, KEY)
    return {
        "fields": {name: _spans(fs) for name, fs in found.items()},
        "verdict": dataclasses.asdict(verdict),
    }


def corpora() -> dict[str, tuple[Callable[[Any], dict[str, Any]], Callable[[], list[Any]]]]:
    return {
        "secret_texts": (text_outputs, secret_texts),
        "policy_texts": (text_outputs, policy_texts),
        "pair_texts": (text_outputs, pair_texts),
        "paws_texts": (text_outputs, paws_texts),
        "generated_texts": (text_outputs, generated_texts),
        "corpus_events": (event_outputs, corpus_events),
        "bench_events": (event_outputs, bench_events),
        "pair_events": (event_outputs, pair_events),
        "cut_events": (event_outputs, cut_events),
    }


def lines(name: str) -> Iterator[str]:
    fn, inputs = corpora()[name]
    for item in inputs():
        yield json.dumps(fn(item), sort_keys=True, ensure_ascii=True)


def digests(dump: Path | None = None) -> dict[str, dict[str, Any]]:
    out = {}
    for name in corpora():
        h = hashlib.sha256()
        n = 0
        sink = open(dump / f"{name}.jsonl", "w") if dump else None  # noqa: SIM115
        for line in lines(name):
            h.update(line.encode() + b"\n")
            n += 1
            if sink:
                sink.write(line + "\n")
        if sink:
            sink.close()
        out[name] = {"items": n, "sha256": h.hexdigest()}
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--dump", type=Path)
    args = parser.parse_args()
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)
    got = digests(args.dump)
    if args.write:
        DIGESTS.write_text(json.dumps(got, indent=2, sort_keys=True) + "\n")
        print(f"wrote {DIGESTS}")
        return 0
    want = json.loads(DIGESTS.read_text())
    bad = [name for name in got if got[name] != want.get(name)]
    for name in got:
        print(f"{name:<16} {got[name]['items']:>6} {'differs' if name in bad else 'identical'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

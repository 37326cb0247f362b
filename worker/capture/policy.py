"""The capture policy (stage 1): event -> verdict. Pure: no I/O except `PolicyConfig.load`.

Only lessons are stored: retros, corrections, surprising failures and patterns. Refused,
each with a machine-readable reason:

- ``secret``: a credential in any field (heading, content, each tag, source, event id,
  supersedes, namespace) or split across two of them. Checked first; always wins.
  The verdict carries only redacted text and a keyed fingerprint, never the secret.
- ``kind_not_allowed``, ``too_short``, ``too_long``, ``denied_pattern``: configuration.
- ``reasoning``: marked by the producer (``event.reasoning``) or read as a plan.
- ``trivia``: raw logs and recaps of what the agent did ("ran query X at 14:33 UTC").
- ``derivable``: pasted code, signatures or API docs with no lesson around them.

Text heuristics live in `memsieve.capture.rules` and prefer admitting: a lost lesson is
worse than a stored bit of trivia.

Unicode and near-identical text
-------------------------------
Byte-identity is the only merge rule: the store hashes the exact UTF-8 bytes of
``heading + "\\n\\n" + content`` (`schemas.events.content_hash`). NFC and NFD forms, case
and whitespace variants of one lesson are *not* merged by hash; they reach the embedding
gate as near-duplicates and supersede, which keeps both texts in history. The policy
never rewrites the text it admits and never rejects NFD text: it reads a normalised copy
(NFC, LF, single spaces) so that all those variants get the same verdict, and it
measures length on that copy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import yaml
from memsieve.capture import rules, secrets
from memsieve.errors import ConfigError
from memsieve.schemas.events import MAX_CONTENT, CaptureEvent, Kind

REASONS = (
    "ok",
    "secret",
    "kind_not_allowed",
    "too_short",
    "too_long",
    "denied_pattern",
    "reasoning",
    "trivia",
    "derivable",
)
ALL_KINDS = frozenset(k.value for k in Kind)
CHECKS = frozenset({"reasoning", "trivia", "derivable"})
ENV_FILE = "MEMSIEVE_POLICY_FILE"
ENV_PREFIX = "MEMSIEVE_POLICY_"


@dataclass(frozen=True)
class Verdict:
    """The policy's answer. Nothing in it holds a secret: repr and logs are safe."""

    admitted: bool
    reason: str
    detail: str
    # Set only for reason == "secret": what the store may persist instead.
    redacted_heading: str | None = None
    redacted_content: str | None = None
    redacted_tags: tuple[str, ...] | None = None
    fingerprint: str | None = None
    secret_kinds: tuple[str, ...] = ()
    # Fields that held a secret, e.g. ("content", "event_id"): the caller must not keep
    # or show the event id, namespace or source of such an event.
    secret_fields: tuple[str, ...] = ()
    # The content was not scanned (too long to keep, refused before the scan): the caller
    # must not keep it.
    content_withheld: bool = False


@dataclass(frozen=True)
class NamespacePolicy:
    """The effective policy for one namespace."""

    allowed_kinds: frozenset[str] = ALL_KINDS
    min_content: int = 10
    max_content: int = 8000
    deny_patterns: tuple[re.Pattern[str], ...] = ()
    checks: frozenset[str] = CHECKS


@dataclass(frozen=True)
class PolicyConfig(NamespacePolicy):
    """Defaults plus per-namespace overrides.

    An override replaces ``allowed_kinds``, ``min_content``, ``max_content`` and ``checks``
    and *adds* to ``deny_patterns`` (a namespace can tighten the deny list, not drop it).
    """

    namespaces: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def for_namespace(self, namespace: str) -> NamespacePolicy:
        base = NamespacePolicy(
            self.allowed_kinds, self.min_content, self.max_content, self.deny_patterns, self.checks
        )
        override = self.namespaces.get(namespace)
        if not override:
            return base
        fields = dict(override)
        fields["deny_patterns"] = base.deny_patterns + tuple(fields.get("deny_patterns", ()))
        return _checked(replace(base, **fields), f"namespaces.{namespace}")

    @classmethod
    def load(cls, path: str | None = None, env: Mapping[str, str] | None = None) -> PolicyConfig:
        """Defaults, then the YAML/JSON file (`path` or $MEMSIEVE_POLICY_FILE), then env vars.

        Env: MEMSIEVE_POLICY_ALLOWED_KINDS (comma list), _MIN_CONTENT, _MAX_CONTENT,
        _DENY_PATTERNS (JSON list of regexes, added to the file's), _CHECKS (comma list of reasoning, trivia,
        derivable; empty turns the heuristics off). Raises ConfigError on anything invalid.
        """
        env = {} if env is None else env
        path = path or env.get(ENV_FILE) or None
        raw: dict[str, Any] = _read_file(path) if path else {}
        namespaces = raw.pop("namespaces", None) or {}
        if not isinstance(namespaces, dict):
            raise ConfigError("policy: namespaces must be a mapping")
        base = _parse(raw, "policy")
        base = _parse_env(env, base)
        parsed = {
            str(ns): _parse(over, f"namespaces.{ns}", partial=True)
            for ns, over in namespaces.items()
        }
        config = cls(**_as_fields(base), namespaces=parsed)
        for ns in parsed:
            config.for_namespace(ns)  # validate the merged result now, not at first event
        return config


_FIELDS = ("allowed_kinds", "min_content", "max_content", "deny_patterns", "checks")


def _as_fields(p: NamespacePolicy) -> dict[str, Any]:
    return {name: getattr(p, name) for name in _FIELDS}


def _read_file(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)  # YAML is a superset of JSON
    except OSError as exc:
        raise ConfigError(f"policy file {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"policy file {path}: not valid YAML/JSON ({exc.__class__.__name__})"
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"policy file {path}: top level must be a mapping")
    return data


def _names(value: Any, allowed: frozenset[str], where: str, key: str) -> frozenset[str]:
    """A comma string or a list of names, each one of `allowed`."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        raise ConfigError(f"{where}.{key} must be a list")
    names = frozenset(str(k).strip() for k in items if str(k).strip())
    unknown = sorted(names - allowed)
    if unknown:
        noun = "kind" if key == "allowed_kinds" else "check"
        raise ConfigError(f"{where}.{key}: unknown {noun} {unknown[0]!r}")
    return names


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool):
        raise ConfigError(f"{where} must be an integer")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where} must be an integer") from None


def _patterns(value: Any, where: str) -> tuple[re.Pattern[str], ...]:
    if not isinstance(value, list | tuple):
        raise ConfigError(f"{where}.deny_patterns must be a list of regexes")
    out = []
    for i, pattern in enumerate(value):
        try:
            out.append(re.compile(str(pattern)))
        except re.error as exc:
            raise ConfigError(f"{where}.deny_patterns[{i}]: bad regex ({exc.msg})") from None
    return tuple(out)


def _parse(raw: Any, where: str, partial: bool = False) -> Any:
    """A mapping from the file -> NamespacePolicy (or, if partial, a dict of overrides)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a mapping")
    unknown = sorted(set(raw) - set(_FIELDS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}")
    out: dict[str, Any] = {}
    if "allowed_kinds" in raw:
        out["allowed_kinds"] = _names(raw["allowed_kinds"], ALL_KINDS, where, "allowed_kinds")
    for key in ("min_content", "max_content"):
        if key in raw:
            out[key] = _int(raw[key], f"{where}.{key}")
    if "deny_patterns" in raw:
        out["deny_patterns"] = _patterns(raw["deny_patterns"], where)
    if "checks" in raw:
        out["checks"] = _names(raw["checks"], CHECKS, where, "checks")
    return out if partial else _checked(NamespacePolicy(**out), where)


def _parse_env(env: Mapping[str, str], base: NamespacePolicy) -> NamespacePolicy:
    out: dict[str, Any] = {}
    if (v := env.get(ENV_PREFIX + "ALLOWED_KINDS")) is not None:
        out["allowed_kinds"] = _names(v, ALL_KINDS, "env", "allowed_kinds")
    for key in ("min_content", "max_content"):
        name = ENV_PREFIX + key.upper()
        if (v := env.get(name)) is not None:
            out[key] = _int(v, name)
    if (v := env.get(ENV_PREFIX + "DENY_PATTERNS")) is not None:
        try:
            patterns = json.loads(v)
        except json.JSONDecodeError:
            raise ConfigError(f"{ENV_PREFIX}DENY_PATTERNS must be a JSON list of regexes") from None
        out["deny_patterns"] = base.deny_patterns + _patterns(patterns, ENV_PREFIX + "DENY")
    if (v := env.get(ENV_PREFIX + "CHECKS")) is not None:
        out["checks"] = _names(v, CHECKS, "env", "checks")
    return _checked(replace(base, **out), "env") if out else base


def _checked(p: NamespacePolicy, where: str) -> NamespacePolicy:
    if not p.allowed_kinds:
        raise ConfigError(f"{where}: allowed_kinds is empty")
    if not 0 <= p.min_content <= p.max_content <= MAX_CONTENT:
        raise ConfigError(
            f"{where}: need 0 <= min_content <= max_content <= {MAX_CONTENT},"
            f" got {p.min_content} and {p.max_content}"
        )
    return p


def event_fields(event: CaptureEvent) -> list[tuple[str, str]]:
    """Every text field of an event in scanning order (neighbours are scanned together)."""
    fields = [("heading", event.heading), ("content", event.content)]
    fields += [(f"tags[{i}]", tag) for i, tag in enumerate(event.tags)]
    fields += [
        ("source.agent", event.source.agent or ""),
        ("source.session", event.source.session or ""),
        ("event_id", event.event_id or ""),
        ("supersedes", event.supersedes or ""),
        ("namespace", event.namespace),
    ]
    return fields


def _secret_verdict(event: CaptureEvent, key: bytes | None, content: bool = True) -> Verdict | None:
    """The secret refusal, if any field holds a secret; `content=False`: every field but
    the content is scanned, and the verdict keeps no content."""
    fields = event_fields(event)
    found = secrets.scan_fields(fields if content else [f for f in fields if f[0] != "content"])
    if not found:
        return None
    every = [f for fs in found.values() for f in fs]
    kinds = sorted({f.kind for f in every})
    where = list(dict.fromkeys(name.split("[")[0] for name in found))
    tags = tuple(
        secrets.redact(tag, found.get(f"tags[{i}]", [])) for i, tag in enumerate(event.tags)
    )
    return Verdict(
        admitted=False,
        reason="secret",
        detail=f"{len(every)} secret(s) in {' and '.join(where)}: {', '.join(kinds)}",
        redacted_heading=secrets.redact(event.heading, found.get("heading", [])),
        redacted_content=secrets.redact(event.content, found.get("content", []))
        if content
        else None,
        redacted_tags=tags,
        fingerprint=secrets.fingerprint(key, event.text) if key is not None else None,
        secret_kinds=tuple(kinds),
        secret_fields=tuple(where),
        content_withheld=not content,
    )


def evaluate(
    event: CaptureEvent, config: PolicyConfig, key: bytes | None = None, scanned: bool = False
) -> Verdict:
    """Admit or refuse one capture event; secrets first, then config, then heuristics.

    `key` (the install's fingerprint key) keys the fingerprint of a secret refusal; without
    it the verdict carries none (never an unkeyed hash of the text). `scanned`: the caller
    has verified that exactly these `event_fields` were scanned clean by this scanner (a
    producer's stamp, memsieve.delivery.stamp), so the secret scan is not run again.
    """
    policy = config.for_namespace(event.namespace)
    content = rules.normalize(event.content)
    if not scanned and len(content) > policy.max_content:
        # Refused for its length whatever it holds: its content is neither scanned (the
        # scan's cost grows with the text) nor kept; the other fields are.
        refusal = _secret_verdict(event, key, content=False)
        return refusal or Verdict(
            False,
            "too_long",
            f"content has {len(content)} chars, maximum {policy.max_content}; not kept",
            content_withheld=True,
        )
    verdict = None if scanned else _secret_verdict(event, key)
    if verdict is not None:
        return verdict
    kind = event.kind.value
    if kind not in policy.allowed_kinds:
        return Verdict(False, "kind_not_allowed", f"kind {kind!r} is not stored in this namespace")
    heading = rules.normalize(event.heading)
    if len(content) < policy.min_content:
        return Verdict(
            False, "too_short", f"content has {len(content)} chars, minimum {policy.min_content}"
        )
    if len(content) > policy.max_content:
        return Verdict(
            False, "too_long", f"content has {len(content)} chars, maximum {policy.max_content}"
        )
    text = f"{heading}\n\n{content}"
    for i, pattern in enumerate(policy.deny_patterns):
        if pattern.search(text):
            # The pattern's index, not the matched text: deny lists often name sensitive terms.
            return Verdict(False, "denied_pattern", f"matches deny pattern #{i}")
    if event.reasoning:
        return Verdict(False, "reasoning", "producer marked the event as intermediate reasoning")
    for check, rule in (
        ("reasoning", rules.reasoning),
        ("trivia", rules.trivia),
        ("derivable", rules.derivable),
    ):
        if check in policy.checks and (detail := rule(heading, content)) is not None:
            return Verdict(False, check, detail)
    return Verdict(True, "ok", f"{kind} admitted")

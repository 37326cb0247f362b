"""Log lines: one per decision, text or JSON, and nothing secret in them."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
from memsieve import logs


@pytest.fixture
def captured() -> Iterator[tuple[io.StringIO, logging.Handler]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(logs.RedactingFilter())
    logger = logging.getLogger("memsieve.test")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield stream, handler
    logger.removeHandler(handler)


DECISION = {
    "event_id": "bf-1",
    "namespace": "ops",
    "decision": "superseded",
    "memory_id": "m-2",
    "supersedes": "m-1",
    "distance": 0.042,
    "reason": "closest within threshold",
}


def test_json_line_has_the_decision_fields_and_omits_absent_ones(
    captured: tuple[io.StringIO, logging.Handler],
) -> None:
    stream, handler = captured
    handler.setFormatter(logs.JsonFormatter())
    logging.getLogger("memsieve.test").info("superseded", extra=DECISION)
    logging.getLogger("memsieve.test").info(
        "rejected", extra={"event_id": "e", "decision": "rejected", "reason": "secret"}
    )
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert {k: first[k] for k in DECISION} == DECISION
    assert (
        first["level"] == "INFO"
        and first["logger"] == "memsieve.test"
        and first["msg"] == "superseded"
    )
    assert first["ts"].endswith("+00:00")
    assert set(second) == {"ts", "level", "logger", "msg", "event_id", "decision", "reason"}


def test_text_line_appends_key_values(captured: tuple[io.StringIO, logging.Handler]) -> None:
    stream, handler = captured
    handler.setFormatter(logs.TextFormatter())
    logging.getLogger("memsieve.test").info("superseded", extra=DECISION)
    line = stream.getvalue().strip()
    assert line.endswith(
        "superseded event_id=bf-1 namespace=ops decision=superseded reason=closest within threshold"
        " memory_id=m-2 supersedes=m-1 distance=0.042"
    )


@pytest.mark.parametrize("fmt", [logs.JsonFormatter(), logs.TextFormatter()])
def test_passwords_and_keys_are_redacted_in_messages_and_tracebacks(
    captured: tuple[io.StringIO, logging.Handler], fmt: logging.Formatter
) -> None:
    stream, handler = captured
    handler.setFormatter(fmt)
    log = logging.getLogger("memsieve.test")
    log.warning("connect to %s failed", "postgresql://app:hunter2pass@db:5432/memsieve")
    log.warning("provider said no to sk-proj-abcdefghijklmnop1234 and Bearer abcdefghijklmnopqrst")
    try:
        raise ConnectionError("redis://:topsecretpw@cache:6379/0 refused")
    except ConnectionError:
        log.exception("broker down")
    out = stream.getvalue()
    for secret in ("hunter2pass", "abcdefghijklmnop1234", "abcdefghijklmnopqrst", "topsecretpw"):
        assert secret not in out
    assert "postgresql://app:***@db:5432/memsieve" in out
    assert "redis://:***@cache:6379/0" in out


def test_redact_leaves_ordinary_text_alone() -> None:
    text = "port 5432 vs 5433, see https://example.com/a:b and user@example.com"
    assert logs.redact(text) == text


def test_setup_installs_one_redacting_handler() -> None:
    root = logging.getLogger()
    saved = list(root.handlers), root.level
    try:
        logs.setup("json", "WARNING")
        assert len(root.handlers) == 1
        assert isinstance(root.handlers[0].formatter, logs.JsonFormatter)
        assert any(isinstance(f, logs.RedactingFilter) for f in root.handlers[0].filters)
        assert root.level == logging.WARNING
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])


def test_exception_text_quoting_input_is_redacted(
    captured: tuple[io.StringIO, logging.Handler],
) -> None:
    stream, handler = captured
    handler.setFormatter(logs.TextFormatter())
    key = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9"
    log = logging.getLogger("memsieve.test")
    try:
        raise ValueError(f"invalid input syntax: {key!r}; the password is hunter3x")
    except ValueError:
        log.exception("capture failed for %s", f"\x1b[2Jheading {key}")
    out = stream.getvalue()
    assert key not in out and "hunter3x" not in out and "\x1b" not in out
    assert "[REDACTED:github_token]" in out


def test_a_clean_short_text_is_scanned_once_and_a_secret_is_never_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memsieve.capture import secrets

    scans: list[str] = []
    real = secrets.redact
    monkeypatch.setattr(secrets, "redact", lambda t: scans.append(t) or real(t))
    monkeypatch.setattr(logs, "_CLEAN", {})
    assert logs.redact("inserted") == logs.redact("inserted") == "inserted"
    assert scans == ["inserted"]
    key = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9"
    for _ in range(2):
        assert key not in logs.redact(f"token {key}")
    assert scans.count(f"token {key}") == 2 and not any(key in t for t in logs._CLEAN)
    long = "word " * 100  # past the length kept: scanned every time
    logs.redact(long), logs.redact(long)
    assert scans.count(long) == 2

"""Scan stamps (memsieve.delivery.stamp): the worker skips its secret scan of an event only
when the producer's stamp verifies for exactly the fields it validated; anything else is
scanned in full and refused if it holds a secret."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from memsieve import constants
from memsieve.capture import policy, secrets
from memsieve.cli import events
from memsieve.delivery import envelope, stamp
from memsieve.flow.accept import CaptureStage
from memsieve.schemas.events import CaptureEvent
from memsieve.settings import Settings

KEY = b"install-key-for-tests-0123456789abcdef"
GHP = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9"
LESSON = {
    "namespace": "web",
    "kind": "retro",
    "heading": "Pin images",
    "content": "Pin base images before the rollout; a floating tag broke staging twice.",
    "tags": ["deploy"],
    "event_id": "evt-1",
}


def _stamp(raw: dict[str, Any], key: bytes = KEY) -> str:
    made = stamp.make(stamp.stamp_key(key), policy.event_fields(CaptureEvent(**raw)))
    assert made is not None
    return made


@pytest.fixture
def stage() -> CaptureStage:
    s = CaptureStage()
    s.key, s.policy = KEY, policy.PolicyConfig()
    return s


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A spy on the worker's secret scan: one entry per event scanned."""
    calls: list[int] = []
    real = secrets.scan_fields

    def spy(fields: Any) -> Any:
        calls.append(1)
        return real(fields)

    monkeypatch.setattr(secrets, "scan_fields", spy)
    return calls


def test_a_verified_stamp_skips_the_scan_and_nothing_else(
    stage: CaptureStage, scans: list[int]
) -> None:
    row, event, stamped = stage.read(LESSON, _stamp(LESSON))
    assert (row.status, stamped, scans) == ("pending", True, [])
    assert event is not None
    # The rest of the policy still runs on a stamped event.
    short = {**LESSON, "content": "Pin it."}
    row, _, stamped = stage.read(short, _stamp(short))
    assert (row.status, row.reason, stamped, scans) == ("rejected", "too_short", True, [])
    # Unstamped, the same event is scanned.
    row, _, stamped = stage.read(LESSON)
    assert (row.status, stamped, scans) == ("pending", False, [1])


@pytest.mark.parametrize(
    "change",
    [
        {"content": f"Pin base images; the deploy token is {GHP}."},
        {"heading": f"Pin {GHP}"},
        {"tags": ["deploy", GHP]},
        {"source": {"agent": GHP, "session": "s1"}},
        {"event_id": GHP},
    ],
)
def test_a_field_changed_after_stamping_is_scanned_and_refused(
    stage: CaptureStage, scans: list[int], change: dict[str, Any]
) -> None:
    tampered = {**LESSON, **change}
    row, _, stamped = stage.read(tampered, _stamp(LESSON))
    assert (row.reason, stamped, scans) == ("secret", False, [1])
    assert GHP not in json.dumps([row.heading, row.content, row.tags, row.event_id])


@pytest.mark.parametrize(
    "given",
    [
        "0" * 64,  # forged
        "not a stamp",
        None,
        12,
        "A" * 64,  # not lower-case hex
    ],
)
def test_a_forged_or_malformed_stamp_is_scanned(
    stage: CaptureStage, scans: list[int], given: Any
) -> None:
    secret = {**LESSON, "content": f"token {GHP}"}
    row, _, stamped = stage.read(secret, given)
    assert (row.reason, stamped, scans) == ("secret", False, [1])


def test_a_stamp_under_another_key_or_scanner_version_is_scanned(
    stage: CaptureStage, scans: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = {**LESSON, "content": f"token {GHP}"}
    other_key = _stamp(secret, key=b"another-install-key-0123456789abcdefgh")
    assert stage.read(secret, other_key)[0].reason == "secret"
    # A producer running another scanner (its version is in the HMAC) is not trusted.
    ours = stamp.scanner_version
    monkeypatch.setattr(stamp, "scanner_version", lambda: "an-older-scanner")
    old = _stamp(secret)
    monkeypatch.setattr(stamp, "scanner_version", ours)
    assert stage.read(secret, old)[0].reason == "secret"
    assert scans == [1, 1]


def test_without_a_key_nothing_is_stamped_or_trusted(tmp_path: Path) -> None:
    fields = policy.event_fields(CaptureEvent(**LESSON))
    assert stamp.make(None, fields) is None
    assert not stamp.verifies(None, fields, _stamp(LESSON))
    # A producer without the install's key file gets none, and does not make one.
    missing = tmp_path / "home" / "memsieve.key"
    assert stamp.producer_key(missing) is None
    assert not missing.exists()
    missing.parent.mkdir()
    missing.write_text("x" * 64 + "\n")
    assert stamp.producer_key(missing) == stamp.stamp_key(b"x" * 64)


def test_the_stamp_key_is_not_the_install_key_and_a_stamp_holds_no_value() -> None:
    skey = stamp.stamp_key(KEY)
    assert skey != KEY and len(skey) == 32
    made = _stamp({**LESSON, "content": "the password is hunter2x"})
    assert len(made) == 64 and "hunter" not in made
    # Fingerprints of refused text use the install key itself, stamps a derived one.
    assert secrets.fingerprint(KEY, "x") != stamp.make(skey, [("heading", "x")])


def test_the_envelope_keeps_well_formed_stamps_and_drops_the_rest() -> None:
    body = [[[LESSON, LESSON]], {}, {}]
    good = ["a" * 64, None]
    for value, kept in (
        (good, good),
        (["a" * 64], None),  # not one per event
        (["a" * 64, "zz"], None),  # a malformed stamp drops them all
        ("a" * 64, None),
    ):
        headers = {"task": constants.TASK_CAPTURE, "id": "x", stamp.HEADER: value}
        clean = envelope.screen(constants.TASK_CAPTURE, 2, headers, body, b"raw")
        assert clean.headers.get(stamp.HEADER) == kept


def test_enqueue_stamps_what_it_scanned_when_it_holds_the_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MEMSIEVE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMSIEVE_EMBEDDER", "hashing")
    sent: list[tuple[list[Any], list[str | None] | None]] = []
    monkeypatch.setattr(events._Sender, "send", lambda self, c, s=None: sent.append((c, s)))
    items = [LESSON, {**LESSON, "event_id": "evt-2", "content": f"token {GHP}"}, "{oops"]
    events.enqueue(items, Settings.from_env())
    assert sent == [([LESSON, "{oops"], [None, None])]  # no key file: nothing stamped
    key_file = Settings.from_env().key_path
    key_file.parent.mkdir(parents=True)
    key_file.write_text("k" * 64 + "\n")
    sent.clear()
    events.enqueue(items, Settings.from_env())
    ((chunk, stamps),) = sent
    assert chunk == [LESSON, "{oops"] and stamps is not None
    assert stamps[0] == _stamp(LESSON, key=b"k" * 64) and stamps[1] is None


def test_the_scanner_version_covers_every_module_of_the_scan() -> None:
    """A producer whose scan differs from the worker's in any capture module must not be
    trusted: the version digests every one of them (a hand-kept list had missed nearby
    and credshapes)."""
    names = {p.stem for p in stamp.scanner_files()}
    used = {m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("memsieve.capture.")}
    assert secrets.find_secrets  # imported above: every module of the scan is loaded
    assert {"secrets", "nearby", "credshapes", "benign", "seeds", "keyed", "policy"} <= names
    assert used <= names

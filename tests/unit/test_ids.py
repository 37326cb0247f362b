"""memsieve.ids: the install key is read only for the ids that need it."""

from __future__ import annotations

from typing import Any

import pytest
from memsieve import ids
from memsieve.ids import describe_payload

GHP = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9"
LESSON = {
    "namespace": "web",
    "kind": "retro",
    "heading": "File naming",
    "content": "This project uses kebab-case for filenames.",
}


def test_the_summary_of_a_clean_message_reads_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_key() -> bytes:
        raise AssertionError("the install key was read")

    monkeypatch.setattr(ids, "default_key", no_key)
    clean = [LESSON, {**LESSON, "event_id": "ev-1"}, "{not json"]
    first = ids.event_id_for(LESSON)
    assert describe_payload(clean) == f"[3 event(s) ns=web first={first}]"
    assert [ids.event_id_for(i) for i in clean[1:]] == ["ev-1", ids.event_id_for("{not json")]


def test_an_id_derived_from_a_secret_is_keyed_with_the_install_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[Any] = []
    monkeypatch.setattr(ids, "default_key", lambda: read.append(1) or b"install-key")
    leaky = {**LESSON, "content": f"token {GHP} in the log"}
    assert ids.event_id_for(leaky) == ids.event_id_for(leaky, b"install-key")
    assert ids.event_id_for(leaky).startswith("s-") and read
    assert ids.event_id_for(leaky, b"other") != ids.event_id_for(leaky, b"install-key")

"""The producer client refuses before sending: schema errors and secrets in any field."""

from __future__ import annotations

import os
from typing import Any

import pytest
from memsieve import client

LESSON = {
    "namespace": "web",
    "kind": "retro",
    "heading": "File naming",
    "content": "This project uses kebab-case for filenames.",
}
GHP = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"content": f"rotate {GHP} now"}, "content"),
        ({"heading": f"Leak {GHP}"}, "heading"),
        ({"tags": ["ci", GHP]}, "tags"),
        ({"source": {"agent": GHP}}, "source.agent"),
        ({"source": {"session": GHP}}, "source.session"),
        ({"event_id": "AKIA" + "Q3TZ7N2WXKJ5LM8P"}, "event_id"),
        ({"heading": "Token " + GHP[:20], "content": GHP[20:] + " leaked"}, "heading"),
        ({"content": "The password is hunter3x for staging, rotate it."}, "content"),
    ],
)
def test_a_secret_anywhere_is_refused_without_echoing_it(change: dict, field: str) -> None:
    with pytest.raises(client.Refused) as info:
        client.check({**LESSON, **change})
    exc = info.value
    assert exc.reason == "secret" and field in exc.fields
    assert "nothing was sent" in str(exc)
    for value in (GHP, GHP[:20], GHP[20:], "hunter3x", "AKIAQ3TZ7N2WXKJ5LM8P"):
        assert value not in str(exc)


def test_schema_errors_are_refused_and_a_made_up_field_name_is_not_echoed() -> None:
    with pytest.raises(client.Refused, match="invalid_event: kind: must be one of"):
        client.check({**LESSON, "kind": "musing"})
    with pytest.raises(client.Refused) as info:
        client.check({**LESSON, GHP: 1})
    assert info.value.reason == "invalid_event" and GHP not in str(info.value)


def test_a_clean_event_passes_with_its_id() -> None:
    event = client.check(LESSON)
    assert event.resolved_id().startswith("h-")


def test_enqueue_refuses_a_secret_before_touching_any_service(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memsieve.cli import main

    monkeypatch.setenv("MEMSIEVE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMSIEVE_EMBEDDER", "hashing")
    old_umask = os.umask(0o022)
    try:
        code = main.main(
            ["enqueue", "--namespace", "web", "--kind", "retro", "--heading", "Leak"]
            + ["--content", f"token {GHP} in the CI log"]
        )
        assert os.umask(0o022) == 0o077  # every command runs with a private umask
    finally:
        os.umask(old_umask)
    err = capsys.readouterr().err
    assert code == 2 and "refused, nothing was sent" in err and "item 1: github_token" in err
    assert GHP not in err
    assert not (tmp_path / "home" / "redis").exists()  # no embedded service was started


def test_a_supersedes_that_is_no_memory_id_is_refused_without_echoing_it() -> None:
    with pytest.raises(client.Refused) as info:
        client.check({**LESSON, "kind": "correction", "supersedes": GHP})
    assert info.value.reason == "invalid_event"
    assert "UUID" in info.value.detail and GHP not in str(info.value)

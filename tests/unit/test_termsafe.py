"""Stored text printed on a terminal: escapes cannot reach it raw."""

from __future__ import annotations

import json

import pytest
from memsieve import termsafe
from memsieve.cli import common

HOSTILE = [
    "\x1b[2J\x1b[Hcleared",  # ANSI: clear screen
    "\x1b]0;pwned\x07title",  # OSC: window title
    "ok\rforged line",  # carriage return overwrites
    "a\u202erm -rf x\u202c",  # bidi override
    "x\u2066y\u2069z\u200fw",  # isolates, marks
    "one-byte CSI \x9b31m red",  # C1
    "del\x7f and bell\x07",
    "zero\u200bwidth and\ufeffbom",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_escape_leaves_no_control_bidi_or_invisible_character(text: str) -> None:
    out = termsafe.escape(text)
    assert all(ch.isprintable() or ch in "\n\t" for ch in out), repr(out)
    assert "\\x" in out or "\\u" in out


def test_escape_keeps_newlines_tabs_and_ordinary_unicode() -> None:
    text = "Line one\n\tcafé ☕ 日本語 emoji 👍"
    assert termsafe.escape(text) == text


@pytest.mark.parametrize("text", HOSTILE)
def test_json_output_escapes_what_json_dumps_leaves_raw(
    text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    common.emit_json({"content": text})
    out = capsys.readouterr().out
    assert all(ch.isprintable() or ch == "\n" for ch in out), repr(out)
    assert json.loads(out) == {"content": text}  # the same string to any JSON reader


def test_say_and_fail_print_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    common.say("heading \x1b[31mred\x1b[0m")
    common.fail("no memory with id \x1b[2J")
    captured = capsys.readouterr()
    assert "\x1b" not in captured.out + captured.err
    assert "\\x1b[31m" in captured.out and "\\x1b[2J" in captured.err

"""Stored text made safe to print on a terminal: one helper for every command.

Lessons come from agents and their inputs. Printed raw, an ANSI escape in one could
clear the screen, retitle the window, hide the lines around it or forge a line of
output, and a bidi control could make `rm -rf x` read as something else. Every command
that prints stored text (recall, explain, history, events, revert, ...) passes it
through `escape`, which writes each such character as a visible `\\x1b` / `\\u202e`
escape. Newlines and tabs are kept: lessons are multi-line.

JSON output gets the same treatment inside its strings (`escape_json`): `json.dumps`
escapes C0 controls already but leaves DEL, C1 controls (0x9b is a one-byte CSI) and
bidi controls raw.
"""

from __future__ import annotations

import re

# C0 except tab and newline, DEL, C1, the bidi embeddings/overrides/isolates and marks,
# line/paragraph separators, and the invisible formatting characters that can hide text.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]"
)
_UNSAFE_JSON = re.compile(
    "[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]"
)


def _visible(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: str) -> str:
    """`text` with every control, bidi and invisible formatting character made visible."""
    return _UNSAFE.sub(_visible, text) if text else text


def _json_escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group(0)):04x}"


def escape_json(text: str) -> str:
    """A JSON document with the characters `json.dumps` leaves raw written as \\uXXXX.

    Only valid on JSON text: outside strings JSON holds none of these characters, and
    inside strings \\uXXXX is the same character to any JSON reader.
    """
    return _UNSAFE_JSON.sub(_json_escape, text)

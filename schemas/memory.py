"""A memory's text and its hash: the one join of heading and content (no pydantic, so the
gate's pure core and the read commands can import it without the event model)."""

from __future__ import annotations

import hashlib


def memory_text(heading: str, content: str) -> str:
    """A memory's one text: heading, a blank line, content. What is embedded, what the
    content hash covers, and what the gate's guards analyse (a blank line ends a sentence
    there, memsieve.gate.text)."""
    return f"{heading}\n\n{content}"


def content_hash(heading: str, content: str) -> str:
    """sha256 of the exact UTF-8 bytes: only byte-identical text merges."""
    return hashlib.sha256(memory_text(heading, content).encode("utf-8")).hexdigest()

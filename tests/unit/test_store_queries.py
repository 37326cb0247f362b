"""The store's named queries: one file, each name once, each one used, no SQL elsewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from memsieve.store import queries

ROOT = Path(__file__).resolve().parents[2]
# Where SQL text may be: the named queries, and the cluster set-up.
SQL_ALLOWED = {
    "worker/store/sql",
    "worker/ops/pg_server.py",  # server administration (roles, databases), not the schema
}
STATEMENT = re.compile(
    r"[\"'](?:\s*)(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|WITH RECURSIVE)\b"
)


def test_parse_reads_named_blocks_and_drops_comments() -> None:
    text = "-- header\n-- name: a\n-- why\nSELECT 1;\n\n-- name: b_2\nSELECT %s\n  FROM t;\n"
    assert queries.parse(text) == {"a": "SELECT 1", "b_2": "SELECT %s\n  FROM t"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("-- name: a\nSELECT 1;\n-- name: a\nSELECT 2;", "query 'a' is named twice"),
        ("-- name: a\n-- only a comment\n", "query 'a' has no statement"),
    ],
)
def test_parse_refuses_a_bad_file(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        queries.parse(text)


def _sources() -> dict[str, str]:
    out = {}
    for folder in ("worker", "tasks"):
        for path in (ROOT / folder).rglob("*.py"):
            out[str(path.relative_to(ROOT))] = path.read_text()
    return out


def test_every_named_query_is_used() -> None:
    code = "\n".join(_sources().values())
    unused = [n for n in queries.QUERIES if f'"{n}"' not in code]
    assert unused == []


def test_no_statement_outside_the_store() -> None:
    found = {
        rel: m.group(1)
        for rel, text in _sources().items()
        if not any(rel.startswith(a) for a in SQL_ALLOWED)
        for m in [STATEMENT.search(text)]
        if m
    }
    assert found == {}


def test_statements_have_no_formatting_holes() -> None:
    # Parameters only: no str.format / f-string fields, no literal % except placeholders.
    for name, sql in queries.QUERIES.items():
        assert "{" not in sql, name
        assert re.sub(r"%(\(\w+\))?[sb]", "", sql).count("%") == 0, name

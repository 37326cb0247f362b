"""The store's named queries: every statement lives in worker/store/sql/queries.sql.

The file is a list of blocks, each opened by a `-- name: <name>` line (procrastinate's
habit): comment lines under it say why, the rest is the statement. It is read once, at
import; a caller names the statement, it never writes one. Parameters are always passed to
the driver (%s, %(name)s, %b), never formatted into the text.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any, LiteralString, cast

import psycopg

_NAME = re.compile(r"^-- name: ([a-z][a-z0-9_]*)\s*$")


def parse(text: str) -> dict[str, LiteralString]:
    """name -> statement for every `-- name:` block of `text` (comment lines dropped)."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        m = _NAME.match(line)
        if m:
            if m.group(1) in found:
                raise ValueError(f"query {m.group(1)!r} is named twice")
            current = found[m.group(1)] = []
        elif current is not None and not line.lstrip().startswith("--"):
            current.append(line)
    out: dict[str, LiteralString] = {}
    for name, lines in found.items():
        sql = "\n".join(lines).strip().rstrip(";").strip()
        if not sql:
            raise ValueError(f"query {name!r} has no statement")
        # A trusted file of the package, not input: the driver gets it as a literal.
        out[name] = cast(LiteralString, sql)
    return out


def _load() -> dict[str, LiteralString]:
    path = resources.files("memsieve.store") / "sql" / "queries.sql"
    return parse(path.read_text(encoding="utf-8"))


QUERIES: dict[str, LiteralString] = _load()


def execute(cur: psycopg.Cursor[Any], name: str, params: Any = None, **kw: Any) -> int:
    """Run query `name` on `cur`; returns the number of rows it touched."""
    cur.execute(QUERIES[name], params, **kw)
    return cur.rowcount


def one(cur: psycopg.Cursor[Any], name: str, params: Any = None) -> Any:
    """The first row of query `name`, or None."""
    cur.execute(QUERIES[name], params)
    return cur.fetchone()


def all(cur: psycopg.Cursor[Any], name: str, params: Any = None, **kw: Any) -> list[Any]:  # noqa: A001
    """Every row of query `name`."""
    cur.execute(QUERIES[name], params, **kw)
    return cur.fetchall()

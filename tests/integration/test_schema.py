"""The migrations build exactly the schema checked in as tests/data/schema.sql.

A migration that changes the schema changes the snapshot in the same commit (regenerate
it with the command in tests/support/schema.py and review the diff); a migration that
builds something else than its author thinks fails here.
"""

from __future__ import annotations

import difflib

from memsieve.ops.services import EmbeddedPostgres
from memsieve.store.postgres import Store

from tests.support import schema


def test_migrations_build_the_checked_in_schema(pg_server: EmbeddedPostgres) -> None:
    built = schema.build(pg_server)
    expected = schema.SNAPSHOT.read_text()
    diff = "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            built.splitlines(keepends=True),
            "tests/data/schema.sql",
            "migrations",
            n=2,
        )
    )
    assert built == expected, f"regenerate with: {schema.REGENERATE}\n{diff[:6000]}"


def test_the_snapshot_is_a_real_schema() -> None:
    """Guards the comparison above against an empty or truncated snapshot."""
    text = schema.SNAPSHOT.read_text()
    for table in ("events", "memories", "schema_migrations"):
        assert f"CREATE TABLE public.{table} (" in text
    assert "CREATE EXTENSION IF NOT EXISTS vector" in text


def test_migrating_twice_changes_nothing(pg_server: EmbeddedPostgres, db_url: str) -> None:
    store = Store(db_url, max_size=1)
    try:
        store.migrate()
        name = db_url.rsplit("/", 1)[1]
        once = schema.dump(pg_server, name)
        assert store.migrate() == []
        assert schema.dump(pg_server, name) == once
    finally:
        store.close()


def test_canonical_drops_only_run_dependent_lines() -> None:
    dump = (
        "--\n-- PostgreSQL database dump\n--\n\\restrict abc123\nSET statement_timeout = 0;\n"
        "SELECT pg_catalog.set_config('search_path', '', false);\n\n\n\n"
        "CREATE TABLE public.t (\n    id integer\n);\n\\unrestrict abc123\n"
    )
    assert schema.canonical(dump) == "CREATE TABLE public.t (\n    id integer\n);\n"

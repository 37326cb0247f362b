"""The schema the migrations build, as canonical SQL (pg_dump --schema-only, cleaned).

tests/integration/test_schema.py compares a fresh database's schema with the checked-in
snapshot tests/data/schema.sql. After adding or changing a migration, regenerate it (one
command, about 10 s; starts and stops its own embedded PostgreSQL):

    . .venv/bin/activate && python -m tests.support.schema

then read `git diff tests/data/schema.sql`: it is the schema change the migration makes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import psycopg
from memsieve.ops.services import EmbeddedPostgres
from memsieve.store.postgres import Store
from psycopg import sql

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "tests" / "data" / "schema.sql"
REGENERATE = ". .venv/bin/activate && python -m tests.support.schema"

# Lines that depend on the pg_dump run, not on the schema: comments (the dump's version
# and timestamps), session settings, and PostgreSQL 18's per-dump \restrict keys.
_NOISE = re.compile(r"^(--|SET |SELECT pg_catalog\.set_config|\\restrict |\\unrestrict )")


def canonical(dump: str) -> str:
    """The dump without run-dependent lines and with single blank lines between statements."""
    lines = [line.rstrip() for line in dump.splitlines() if not _NOISE.match(line)]
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def dump(pg: EmbeddedPostgres, database: str) -> str:
    done = subprocess.run(
        [
            str(pg.bindir / "pg_dump"),
            "--schema-only",
            "--no-owner",
            "--no-privileges",
            "--no-tablespaces",
            f"--dbname={pg.admin_url(database)}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"pg_dump failed: {done.stderr.strip()[-2000:]}")
    return canonical(done.stdout)


def build(pg: EmbeddedPostgres) -> str:
    """Migrate a fresh database (as `memsieve migrate` does) and return its schema."""
    name = f"schema_{uuid.uuid4().hex[:10]}"
    pg.ensure_app_database(name)
    try:
        store = Store(pg.url(name), max_size=1)
        try:
            store.migrate()
        finally:
            store.close()
        return dump(pg, name)
    finally:
        with psycopg.connect(pg.admin_url("postgres"), autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def main() -> int:
    # Outside pytest's tree and in /tmp, as the fixtures do: as root, the server runs as
    # another user who must traverse every folder above its data.
    path = Path(tempfile.mkdtemp(prefix="memsieve-schema-", dir="/tmp"))
    pg = EmbeddedPostgres(path / "data", database="postgres")
    try:
        pg.start()
        SNAPSHOT.write_text(build(pg))
    finally:
        pg.stop(mode="immediate")
        shutil.rmtree(path, ignore_errors=True)
    print(f"wrote {SNAPSHOT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

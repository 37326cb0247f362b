"""`memsieve history | explain | revert | recall --as-of` as a new user runs them: real
subprocesses against the test's Postgres, text for people, stable --json for programs."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timedelta
from typing import Any

from tests.support import cli as support_cli

STAGING = "The staging database listens on port 5433, behind the VPN."
PROD = "The production database listens on port 5432, behind the bastion."


def cli(env: dict[str, str], *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = support_cli.run(env, *args)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def js(env: dict[str, str], *args: str) -> Any:
    return json.loads(cli(env, *args, "--json").stdout)


def test_mistaken_supersede_seen_explained_and_reverted_from_the_cli(env: dict[str, str]) -> None:
    staging = json.loads(
        cli(
            env,
            "write",
            "--namespace",
            "infra",
            "--kind",
            "retro",
            "--heading",
            "Database port",
            "--content",
            STAGING,
            "--event-id",
            "e-staging",
            "--agent",
            "ops-bot",
        ).stdout
    )
    prod = json.loads(
        cli(
            env,
            "write",
            "--namespace",
            "infra",
            "--kind",
            "correction",
            "--heading",
            "Database port",
            "--content",
            PROD,
            "--event-id",
            "e-prod",
            "--agent",
            "ops-bot",
            "--supersedes",
            staging["memory_id"],
        ).stdout
    )
    s, p = staging["memory_id"], prod["memory_id"]
    assert prod["decision"] == "superseded" and prod["supersedes"] == s

    lin = js(env, "history", p)
    assert sorted(lin) == ["conflicts", "links", "memory_id", "namespace", "steps", "versions"]
    assert [v["memory_id"] for v in lin["versions"]] == [s, p]
    assert [v["live"] for v in lin["versions"]] == [False, True]
    assert sorted(lin["versions"][0]) == sorted(
        [
            "memory_id",
            "namespace",
            "kind",
            "heading",
            "content",
            "created_at",
            "deleted_at",
            "live",
            "event_id",
            "agent",
            "intervals",
            "supersedes",
            "supersede_active",
            "superseded_by",
            "decision",
            "number",
        ]
    )
    superseded_at = datetime.fromisoformat(lin["versions"][1]["created_at"])

    text = cli(env, "explain", p).stdout
    assert text.startswith(f"Memory {p[:8]} ('Database port: The production database")
    assert "exists because event e-prod (correction from agent ops-bot, " in text
    assert f"replaced memory {s[:8]} ('Database port: The staging database" in text
    assert text.strip().endswith("It is live.")
    ex = js(env, "explain", "e-prod")
    assert sorted(ex) == ["facts", "id", "live", "outcome", "subject", "text"]
    assert (ex["subject"], ex["outcome"], ex["live"]) == ("event", "superseded", True)

    before = (superseded_at - timedelta(microseconds=1)).isoformat()
    assert [
        r["memory_id"] for r in js(env, "recall", "infra", "database port", "--as-of", before)
    ] == [s]
    assert [r["memory_id"] for r in js(env, "recall", "infra", "database port")] == [p]

    done = js(env, "revert", p, "--actor", "alice", "--reason", "different databases")
    assert (done["kind"], done["older_id"], done["newer_id"]) == ("revert", s, p)
    assert sorted(r["memory_id"] for r in js(env, "recall", "infra", "database port")) == sorted(
        [s, p]
    )
    # Between the supersede and the revert, only prod was live.
    between = (datetime.fromisoformat(done["at"]) - timedelta(microseconds=1)).isoformat()
    assert [
        r["memory_id"] for r in js(env, "recall", "infra", "database port", "--as-of", between)
    ] == [p]

    again = cli(env, "revert", p, ok=False)
    assert again.returncode == 1
    assert (
        "already reverted" in again.stderr
        and f"memsieve revert rev-{done['revision']}" in again.stderr
    )
    assert js(env, "history", s)["steps"][-1]["kind"] == "revert"

    text = cli(env, "history", s).stdout
    assert "2 versions, oldest first; 2 live now" in text
    assert f"alice reverted rev-{done['undoes']}: v1 live again, v2 stays live" in text
    assert "(reason: 'different databases')" in text
    undo = js(env, "revert", f"rev-{done['revision']}")
    assert undo["kind"] == "unrevert"
    assert [r["memory_id"] for r in js(env, "recall", "infra", "database port")] == [p]

    missing = cli(env, "explain", "no-such-thing", ok=False)
    assert missing.returncode == 1 and "no memory or event with id no-such-thing" in missing.stderr
    bad = cli(env, "recall", "infra", "q", "--as-of", "last tuesday", ok=False)
    assert bad.returncode == 2 and "is not a date or time" in bad.stderr

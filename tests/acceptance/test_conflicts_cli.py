"""Updates kept as conflicts, seen and settled from the command line: real subprocesses
against the test's Postgres (`memsieve write | conflicts | recall | explain | resolve |
history | revert`)."""

from __future__ import annotations

import json
from typing import Any

from tests.acceptance.test_history_cli import cli, js

OLD = "Postgres listens on port 5432."
NEW = "Postgres listens on port 5433."


def write(env: dict[str, str], event_id: str, content: str, kind: str = "retro") -> Any:
    out = cli(
        env,
        "write",
        "--namespace",
        "infra",
        "--kind",
        kind,
        "--heading",
        "Database port",
        "--content",
        content,
        "--event-id",
        event_id,
    ).stdout
    return json.loads(out)


def test_an_update_is_listed_marked_resolved_and_reverted(env: dict[str, str]) -> None:
    old = write(env, "e-old", OLD)
    new = write(env, "e-new", NEW)
    assert (old["decision"], new["decision"]) == ("inserted", "inserted")
    assert new["reason"].startswith("update of a live memory kept as a conflict")
    o, n = old["memory_id"], new["memory_id"]

    [c] = js(env, "conflicts", "--namespace", "infra")
    assert (c["older_id"], c["newer_id"], c["event_id"], c["verdict"]) == (o, n, "e-new", "update")
    assert c["closed_at"] is None
    assert js(env, "conflicts", "--namespace", "elsewhere") == []
    text = cli(env, "conflicts").stdout
    assert f"conflict {c['id']}  [infra]" in text and f"newer {n}" in text and f"older {o}" in text
    assert "1 open; settle one with: memsieve resolve ID --winner newer|older" in text

    [mem] = js(env, "stats")["memories"]
    assert (mem["namespace"], mem["live"], mem["open_conflicts"]) == ("infra", 2, 1)
    assert "open conflicts 1" in cli(env, "stats").stdout

    hits = js(env, "recall", "infra", "database port", "-k", "5")
    assert [h["memory_id"] for h in hits] == [n, o]
    assert [h["conflicts"][0]["this_is"] for h in hits] == ["newer", "older"]
    assert (
        f"! conflict {c['id']}: updates {o}" in cli(env, "recall", "infra", "database port").stdout
    )
    assert "which it updates" in cli(env, "explain", n).stdout

    done = js(env, "resolve", str(c["id"]), "--winner", "newer", "--actor", "ana")
    assert (done["winner_id"], done["loser_id"]) == (n, o)
    assert js(env, "conflicts") == []
    assert [h["memory_id"] for h in js(env, "recall", "infra", "database port")] == [n]
    assert "as an update (resolved by ana)" in cli(env, "history", n).stdout
    again = cli(env, "resolve", str(c["id"]), "--winner", "older", ok=False)
    assert again.returncode == 1 and "already closed" in again.stderr

    cli(env, "revert", n)
    assert [x["id"] for x in js(env, "conflicts")] == [c["id"]]
    assert sorted(h["memory_id"] for h in js(env, "recall", "infra", "database port")) == sorted(
        [n, o]
    )


def test_a_correction_replaces_the_memory_it_updates(env: dict[str, str]) -> None:
    old = write(env, "e-old", OLD)
    fix = write(env, "e-fix", NEW, kind="correction")
    assert (fix["decision"], fix["supersedes"], fix["reason"]) == (
        "superseded",
        old["memory_id"],
        "update",
    )
    assert js(env, "conflicts") == []


def test_on_conflict_is_validated_and_newest_wins_when_chosen(env: dict[str, str]) -> None:
    bad = cli({**env, "MEMSIEVE_ON_CONFLICT": "latest"}, "conflicts", ok=False)
    assert bad.returncode == 2 and "MEMSIEVE_ON_CONFLICT must be keep or newest" in bad.stderr
    newest = {**env, "MEMSIEVE_ON_CONFLICT": "keep,infra=newest"}
    old = write(newest, "e-old", OLD)
    new = write(newest, "e-new", NEW)
    assert (new["decision"], new["supersedes"], new["reason"]) == (
        "superseded",
        old["memory_id"],
        "update",
    )

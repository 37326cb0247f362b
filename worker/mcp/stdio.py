"""`memsieve mcp` over stdio: the SDK's transport, and an answer to every request it drops.

The SDK parses each stdin line with pydantic; a line it cannot parse goes to the server as an
exception, which the server logs and drops: the client waits for its answer for ever. One
line valid JSON for Python but not for pydantic's parser is enough: a lone UTF-16 surrogate
escape ("\\ud800", a truncated emoji) in any string. A request the SDK cannot parse but whose
id is still readable is answered here with a JSON-RPC error instead (-32700 for JSON the
server cannot read, -32600 for a message of the wrong shape); the reason names positions and
fields, never the caller's values. Anything else (no id: a notification, or no JSON at all)
goes to the server as before.

A request whose id is neither a string nor an integer (1.5, an object, null, true) parses:
the SDK's models drop the id and read it as a notification, which nobody answers. Each
stdin line is therefore screened before the SDK reads it (`invalid_id_reply`), and such a
request is answered with an invalid-request error and a null id (MCP: an id is a string or
an integer, never null).
"""

from __future__ import annotations

import json
import re
import sys
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types as types
from mcp.server import stdio as sdk_stdio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError


async def run_stdio(server: Any) -> None:
    """Serve `server` (an MCPServer) over stdio, as `MCPServer.run_stdio_async` does."""
    lowlevel = server._lowlevel_server  # noqa: SLF001 - run_stdio_async's own call, below
    # stdin as the SDK claims it (fd 0 then reads the null device), each line screened first.
    buffer, release = sdk_stdio._claim_fd(0, sys.stdin, "rb", sdk_stdio._open_stdin_diversion)  # noqa: SLF001
    text = sdk_stdio._UnownedTextWrapper(buffer, encoding="utf-8", errors="replace")  # noqa: SLF001
    verdicts: deque[SessionMessage | None] = deque()
    stdin = _Screened(anyio.wrap_file(text), verdicts)
    try:
        async with stdio_server(stdin=stdin) as (read, write):  # type: ignore[arg-type]
            await _serve(lowlevel, read, write, verdicts)
    finally:
        if release is not None:
            release()  # fd 0 back on the wire


class _Screened:
    """Stdin's lines as they come, with each line's verdict (`invalid_id_reply`) queued in
    line order: the SDK's reader turns every line into exactly one item, in order."""

    def __init__(self, lines: Any, verdicts: deque[SessionMessage | None]) -> None:
        self.lines, self.verdicts = lines, verdicts

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self.lines:
            try:
                self.verdicts.append(invalid_id_reply(line))
            except Exception:  # noqa: BLE001 - never stop the reader on a line
                self.verdicts.append(None)
            yield line


async def _serve(lowlevel: Any, read: Any, write: Any, verdicts: deque[Any]) -> None:
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

    async def relay() -> None:
        async with send:
            async for item in read:
                verdict = verdicts.popleft() if verdicts else None
                if verdict is not None:
                    await write.send(verdict)
                    continue
                if isinstance(item, Exception):
                    try:
                        fixed, reply = repaired(item), error_reply(item)
                    except Exception:  # noqa: BLE001 - never stop the relay on a line
                        fixed = reply = None
                    if fixed is not None:
                        item = fixed  # served as if the mark had not been there
                    elif reply is not None:
                        await write.send(reply)
                        continue
                await send.send(item)

    async with anyio.create_task_group() as tg:
        tg.start_soon(relay)
        await lowlevel.run(receive, write, lowlevel.create_initialization_options())
        tg.cancel_scope.cancel()


def invalid_id_reply(line: str) -> SessionMessage | None:
    """The invalid-request error (null id) answering a request whose id is no string or
    integer; None for every other line (the SDK and `error_reply` deal with those)."""
    if '"id"' not in line:
        return None
    try:
        # A byte-order mark before the request is read past, as `repaired` serves it.
        message = json.loads(line.removeprefix("\ufeff"))
    except (ValueError, RecursionError):
        return None  # the SDK fails to parse it too: `error_reply` answers
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    if "id" not in message:
        return None
    ident = message["id"]
    if isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool)):
        return None
    kind = {float: "a number with a fraction", dict: "an object", list: "a list"}.get(
        type(ident), "null" if ident is None else "a boolean"
    )
    reason = f"a request's id must be a string or an integer, not {kind}"
    error = types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=types.INVALID_REQUEST, message=reason)
    )
    return SessionMessage(error)


def error_reply(exc: Exception) -> SessionMessage | None:
    """The JSON-RPC error answering a line the SDK failed to parse: with the request's id
    where it is readable, with a null id where it is not (JSON-RPC 2.0: a parse error or
    an invalid request whose id cannot be read); None for a notification (nobody waits for
    an answer) and for anything that is not a parse failure."""
    if not isinstance(exc, ValidationError):
        return None
    errors = exc.errors(include_url=False)
    raw = next((e["input"] for e in errors if e["type"] == "json_invalid"), None)
    message: Any
    if isinstance(raw, str):
        try:
            message = json.loads(raw)
        except ValueError:
            message = None  # not JSON at all: no id to read
        except RecursionError:
            # Nested deeper than Python's parser goes: the id is read at the top level.
            message = _top_level(raw)
        code = types.PARSE_ERROR
        reason = "the message is not JSON this server can read: " + str(errors[0]["msg"])
        if "surrogate" in reason or "hex escape" in reason:
            reason += " (a lone UTF-16 surrogate escape: send text as valid Unicode)"
    else:
        message = next((e["input"] for e in errors if isinstance(e["input"], dict)), None)
        if message is None:  # a batch (a list), or a bare value: the line's own value
            message = next((e["input"] for e in errors if len(e["loc"]) <= 1), None)
        code = types.INVALID_REQUEST
        # A union's errors, one set per message kind; a message with a method and an id is
        # a request: name only what the request kind missed.
        errors = [e for e in errors if e["loc"][:1] == ("JSONRPCRequest",)] or errors
        fields = sorted({".".join(str(p) for p in e["loc"][1:]) or "message" for e in errors})
        reason = "not a valid JSON-RPC message; check: " + ", ".join(fields)[:300]
    if isinstance(message, list):
        code, reason = types.INVALID_REQUEST, "batches are not supported: one message per line"
    if isinstance(message, dict) and "method" in message and "id" not in message:
        return None  # a notification: nobody waits for an answer
    ident = message.get("id") if isinstance(message, dict) else None
    if isinstance(ident, bool) or not isinstance(ident, (int, str)):
        ident = None  # no usable id: JSON-RPC answers with a null one
    error = types.JSONRPCError(
        jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=reason)
    )
    return SessionMessage(error)


def repaired(exc: Exception) -> SessionMessage | None:
    """A request the SDK refused only for a byte-order mark before it, read without it."""
    if not isinstance(exc, ValidationError):
        return None
    raw = next((e["input"] for e in exc.errors() if e["type"] == "json_invalid"), None)
    if not isinstance(raw, str) or not raw.startswith("\ufeff"):
        return None
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(raw[1:], by_name=False))
    except (ValidationError, ValueError, RecursionError):
        return None


_ID = re.compile(r'"(id|method)"\s*:\s*(-?\d+(?![.eE\d])|"(?:[^"\\]|\\.)*")')


def _top_level(raw: str) -> dict[str, Any] | None:
    """The `id` and `method` members of a JSON object's top level, read without parsing
    what is nested in it (a linear scan that skips strings and counts brackets)."""
    out: dict[str, Any] = {}
    depth = 0
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == '"':
            m = _ID.match(raw, i) if depth == 1 else None
            if m is not None:
                try:
                    out.setdefault(m.group(1), json.loads(m.group(2)))
                except ValueError:
                    return None
                i = m.end()
                continue
            i += 1
            while i < n and raw[i] != '"':
                i += 2 if raw[i] == "\\" else 1
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        i += 1
    return out if raw.lstrip().startswith("{") else None

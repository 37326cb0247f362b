"""`memsieve mcp` over stdio: the SDK's transport, and an answer to every request it drops.

The SDK parses each stdin line with pydantic; a line it cannot parse goes to the server as an
exception, which the server logs and drops: the client waits for its answer for ever. One
line valid JSON for Python but not for pydantic's parser is enough: a lone UTF-16 surrogate
escape ("\\ud800", a truncated emoji) in any string. A request the SDK cannot parse but whose
id is still readable is answered here with a JSON-RPC error instead (-32700 for JSON the
server cannot read, -32600 for a message of the wrong shape); the reason names positions and
fields, never the caller's values. Anything else (no id: a notification, or no JSON at all)
goes to the server as before.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError


async def run_stdio(server: Any) -> None:
    """Serve `server` (an MCPServer) over stdio, as `MCPServer.run_stdio_async` does."""
    lowlevel = server._lowlevel_server  # noqa: SLF001 - run_stdio_async's own call, below
    async with stdio_server() as (read, write):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay() -> None:
            async with send:
                async for item in read:
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

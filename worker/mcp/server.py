"""`memsieve mcp`: the MCP server (official SDK, `mcp` on PyPI), over stdio or streamable HTTP.

Tools: remember, recall, history, explain. There is no forget: memories change only by
supersede (a correction) or an operator's revert. One server serves a fixed set of
namespaces (memsieve.mcp.backend.Scope); a call naming any other is refused.
"""

import hmac
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from memsieve.mcp.backend import MAX_K, MAX_WAIT, Backend, ToolRefusal
from pydantic import Field, ValidationError

log = logging.getLogger("memsieve.mcp")

# No `from __future__ import annotations` here: the SDK reads the tools' annotations at run
# time, from this module's globals.
NS_HELP = (
    "a namespace this server serves (listed in its instructions); may be left out when it "
    "serves only one"
)

Kind = Literal["retro", "correction", "failure", "pattern"]

INSTRUCTIONS = """\
memsieve keeps this agent fleet's long-term lessons: one live memory per fact, with history.
Call `recall` before a task to read what was learned; call `remember` when you learned a
lesson worth keeping (a retro after a task, a correction from a human, a surprising failure,
a pattern seen across sessions). Never put secrets, session trivia, intermediate reasoning or
facts readable from the repository in `remember`: they are refused. To replace a memory that
is wrong, `remember` a correction with `supersedes` set to its memory_id. `history` and
`explain` tell how a memory came to be and what became of an event."""


def _safe_message(exc: BaseException, tool: str) -> str:
    """A tool error's text without any value the caller sent."""
    from memsieve.capture import secrets

    cause = exc.__cause__
    if isinstance(cause, ValidationError):
        parts = []
        for err in cause.errors(include_input=False, include_url=False):
            where = ".".join(str(p) for p in err["loc"]) or "arguments"
            parts.append(f"{where}: {err['msg']}")
        return secrets.redact(f"invalid arguments for {tool}: " + "; ".join(parts))
    if isinstance(exc, UnexpectedToolError):
        return f"{tool} failed inside memsieve; see the server's log"
    return secrets.redact(str(exc))


class MemsieveMCP(MCPServer[Any]):
    """MCPServer whose tool errors never repeat the caller's values (a secret sent in a
    wrongly typed argument must not come back in the pydantic message, or reach a log)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            # The whole record, traceback included, goes through memsieve's redacting
            # formatter (memsieve.logs); the caller gets a sentence without it.
            log.error("tool %s failed", name, exc_info=exc.__cause__ or exc)
            raise UnexpectedToolError(_safe_message(exc, name)) from None
        except ToolError as exc:
            known = name in {"remember", "recall", "history", "explain"}
            raise ToolError(_safe_message(exc, name if known else "an unknown tool")) from None


async def _run(fn: Callable[..., dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
    try:
        return await anyio.to_thread.run_sync(lambda: fn(**kwargs))
    except ToolRefusal as exc:
        raise ToolError(str(exc)) from None


def build_server(backend: Backend) -> MemsieveMCP:
    scope = ", ".join(backend.scope.namespaces)
    server = MemsieveMCP(
        "memsieve",
        instructions=INSTRUCTIONS + f"\nThis server serves namespace(s): {scope}.",
        log_level="WARNING",
    )

    @server.tool(
        description="Capture one lesson into long-term memory through memsieve's queue and "
        "capture policy. Returns the event_id at once; with wait_seconds > 0 it waits up to that "
        "long for the decision: written (inserted | superseded | merged, with memory_id) or "
        "rejected (with its reason, e.g. trivia, reasoning, derivable). Content holding a "
        "secret is refused before anything is queued."
    )
    async def remember(
        kind: Annotated[
            Kind,
            Field(
                description="retro (after a task), correction (a human corrected you), "
                "failure (a surprising failure), pattern (seen across sessions)"
            ),
        ],
        heading: Annotated[str, Field(description="a short subject line for the lesson")],
        content: Annotated[str, Field(description="the lesson itself, one fact, in full")],
        namespace: Annotated[str | None, Field(description=NS_HELP)] = None,
        tags: Annotated[list[str] | None, Field(description="optional labels")] = None,
        supersedes: Annotated[
            str | None,
            Field(description="for a correction: the memory_id of the memory it replaces"),
        ] = None,
        event_id: Annotated[
            str | None,
            Field(description="idempotency key; default: derived from the content"),
        ] = None,
        wait_seconds: Annotated[
            float,
            Field(ge=0, le=MAX_WAIT, description="wait this long for the decision (0: don't)"),
        ] = 0.0,
    ) -> dict[str, Any]:
        return await _run(
            backend.remember,
            kind=kind,
            heading=heading,
            content=content,
            namespace=namespace,
            tags=tags,
            supersedes=supersedes,
            event_id=event_id,
            wait_seconds=wait_seconds,
        )

    @server.tool(
        description="The live memories nearest a query, closest first (cosine distance). With "
        "as_of, what recall would have answered then: the memories live at that time."
    )
    async def recall(
        query: Annotated[str, Field(description="what you want to know")],
        namespace: Annotated[str | None, Field(description=NS_HELP)] = None,
        # strict: `true` is no count (pydantic would read it as 1).
        k: Annotated[int, Field(strict=True, ge=1, le=MAX_K, description="how many memories")] = 5,
        as_of: Annotated[
            str | None,
            Field(description="ISO 8601 date or time (no zone = UTC), e.g. 2026-01-15"),
        ] = None,
    ) -> dict[str, Any]:
        return await _run(backend.recall, query=query, namespace=namespace, k=k, as_of=as_of)

    @server.tool(
        description="Every version of a memory, oldest first: what each replaced, what replaced "
        "it, which is live, and why (text for reading, lineage for programs)."
    )
    async def history(
        memory_id: Annotated[str, Field(description="a memory_id from recall or remember")],
    ) -> dict[str, Any]:
        return await _run(backend.history, memory_id=memory_id)

    @server.tool(
        description="In plain words: why a memory exists, or what became of a capture event "
        "(inserted, superseded, merged, rejected with its reason, still pending)."
    )
    async def explain(
        id: Annotated[str, Field(description="a memory_id or an event_id")],
        namespace: Annotated[
            str | None,
            Field(description="the event's namespace, when this server serves several"),
        ] = None,
    ) -> dict[str, Any]:
        return await _run(backend.explain, id=id, namespace=namespace)

    return server


# -- HTTP: a bearer token in front of the SDK's app ------------------------------------------
ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]


def require_token(app: ASGIApp, token: str) -> ASGIApp:
    """Refuse every HTTP request without `Authorization: Bearer <token>` (401)."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"text/plain"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send(
                    {"type": "http.response.body", "body": b"memsieve mcp: token required\n"}
                )
                return
        await app(scope, receive, send)

    return guarded


async def serve_http(
    server: MemsieveMCP, host: str, port: int, token: str | None, ready: Callable[[int], None]
) -> None:
    import socket

    import uvicorn

    app: Any = server.streamable_http_app(host=host)
    if token:
        app = require_token(app, token)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    userver = uvicorn.Server(config)
    ready(sock.getsockname()[1])
    await userver.serve(sockets=[sock])

"""`memsieve mcp`: serve capture and recall to agents over the Model Context Protocol.

    memsieve mcp --namespace web                         # stdio (the agent starts it)
    memsieve mcp --namespace web --namespace ops --transport http --port 8765

Needs the optional `mcp` extra (`pip install 'memsieve[mcp]'`). See docs/mcp.md.
"""

from __future__ import annotations

import argparse
import os
import secrets as pysecrets
import signal
import sys
import threading
from pathlib import Path

from memsieve import errors
from memsieve.settings import Settings

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="memsieve mcp",
        description="An MCP server (tools: remember, recall, history, explain) bound to one or "
        "more namespaces; no call can read or write any other.",
    )
    p.add_argument(
        "--namespace",
        action="append",
        default=[],
        help="a namespace this server serves (repeatable; default: MEMSIEVE_MCP_NAMESPACES, "
        "comma-separated)",
    )
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP: address to bind (default loopback)")
    p.add_argument("--port", type=int, default=8765, help="HTTP: port (0 = any free port)")
    p.add_argument(
        "--token-file",
        help="HTTP: file holding the bearer token clients must send (created, 0600, if "
        "missing; default MEMSIEVE_HOME/mcp-token)",
    )
    p.add_argument(
        "--no-token",
        action="store_true",
        help="HTTP on a loopback address only: accept requests without a token",
    )
    p.add_argument(
        "--worker",
        choices=["auto", "yes", "no"],
        default="auto",
        help="start a memsieve worker beside the server: auto = when none answers (default)",
    )
    p.add_argument("--agent", default="mcp", help="source.agent recorded on captured events")
    return p


def _namespaces(args: argparse.Namespace, settings: Settings) -> tuple[str, ...]:
    names = list(args.namespace) or list(settings.mcp_namespaces)
    return tuple(dict.fromkeys(n for n in names if n))


def _token(settings: Settings, path_arg: str | None) -> tuple[str, Path]:
    path = Path(path_arg).expanduser() if path_arg else settings.home / "mcp-token"
    if path.exists():
        token = path.read_text().strip()
        if not token:
            raise errors.ConfigError(f"{path} is empty")
        return token, path
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = pysecrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return token, path


def cli_mcp(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        import anyio
        from memsieve.mcp.server import build_server, serve_http
    except ImportError as exc:
        if "mcp" not in str(exc):
            raise
        sys.stderr.write(
            "memsieve: `memsieve mcp` needs the MCP SDK: pip install 'memsieve[mcp]'\n"
        )
        return 2
    from memsieve import logs
    from memsieve.cli.service import settings_for
    from memsieve.mcp.backend import Backend, Scope

    try:
        settings = settings_for(args)
        scope = Scope(_namespaces(args, settings))
        token = None
        token_path = None
        if args.transport == "http":
            if args.no_token and args.host not in LOOPBACK:
                raise errors.ConfigError("--no-token is only allowed on a loopback address")
            if not args.no_token:
                token, token_path = _token(settings, args.token_file)
    except errors.ConfigError as exc:
        sys.stderr.write(f"memsieve: {exc}\n")
        return 2
    backend = Backend(settings, scope, worker=args.worker, agent=args.agent)
    server = build_server(backend)
    logs.setup(settings.log_format, settings.log_level)  # ours, with redaction, on stderr

    def warm() -> None:
        try:
            backend.ready()
        except Exception as exc:  # noqa: BLE001 - the first tool call reports it again
            sys.stderr.write(f"memsieve mcp: services not ready: {type(exc).__name__}\n")

    def _terminate(signum: int, _frame: object) -> None:
        # SIGTERM (a client stopping a stdio server, uvicorn re-raising it after its own
        # graceful shutdown) unwinds through `finally`, so the worker started here stops too.
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _terminate)
    # The stack starts while the client initialises; a call that comes first waits for it.
    threading.Thread(target=warm, name="memsieve-mcp-warm", daemon=True).start()
    try:
        if args.transport == "stdio":
            from memsieve.mcp.stdio import run_stdio

            anyio.run(run_stdio, server)
        else:

            def ready(port: int) -> None:
                where = f" (bearer token in {token_path})" if token_path else " (no token)"
                sys.stderr.write(
                    f"memsieve mcp: serving {', '.join(scope.namespaces)} on "
                    f"http://{args.host}:{port}/mcp{where}\n"
                )
                sys.stderr.flush()

            anyio.run(lambda: serve_http(server, args.host, args.port, token, ready))
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        backend.close()
    return 0

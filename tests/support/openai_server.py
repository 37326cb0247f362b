"""A local OpenAI-compatible embeddings server for tests and the bench.

Real HTTP/1.1 (keep-alive) on 127.0.0.1 at a random port, served from a thread, so the
real `openai` client runs against it unchanged. POST /v1/embeddings answers deterministic
unit vectors (worker.embedders.hashing, `dimensions` honoured, float or base64) and enforces
the real limits: 2048 inputs, 300,000 tokens per request, 8192 per input, no empty input.

Scripting, per test:
    fake.push(Reply(status=429, retry_after="0.05"), times=2)   # the next 2 requests
    fake.push(Reply(delay=1.0))                                  # slow answer
    fake.push(Reply(reset=True))                                 # close without answering
    fake.bad_marker = "<<BAD>>"        # any request holding an input with it -> 400
    fake.throttle_every = 2            # every 2nd request -> 429 with retry_after_ms
    fake.api_key = "sk-test"           # anything else -> 401
    fake.answer_format = "float"       # floats whatever was asked, as many compatible
                                       # servers do ("base64": always base64; "request":
                                       # what the request's encoding_format asks, default)
    fake.push(Reply(garble=True))      # a 200 whose body is cut short (a broken proxy)

Counters (thread-safe): requests, inputs, tokens (cl100k_base) received, and `log`, one
Seen per request.
"""

from __future__ import annotations

import base64
import json
import socket
import struct
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
from memsieve.embedders import tokens
from memsieve.embedders.hashing import HashingEmbedder

if TYPE_CHECKING:
    from memsieve.embedders.openai import OpenAIEmbedder

MAX_INPUTS = 2048
MAX_REQUEST_TOKENS = 300_000
MAX_INPUT_TOKENS = 8192


@dataclass
class Reply:
    """One scripted answer. status 200 = normal embeddings (after `delay`)."""

    status: int = 200
    delay: float = 0.0
    reset: bool = False
    retry_after: str | None = None  # Retry-After header value, seconds
    retry_after_ms: str | None = None
    code: str | None = None  # error.code, e.g. "insufficient_quota"
    param: str | None = None  # error.param, e.g. "input[3]"
    message: str = "scripted failure"
    garble: bool = False  # 200 with a truncated JSON body


@dataclass(frozen=True)
class Seen:
    """One request as received: when, how many inputs and tokens, what we answered."""

    at: float
    inputs: int
    tokens: int
    status: int  # 0 = connection reset
    encoding: str | None = None  # the request's encoding_format


@dataclass
class _State:
    script: deque[Reply] = field(default_factory=deque)
    log: list[Seen] = field(default_factory=list)
    seq: int = 0  # requests answered without a script, for throttle_every


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOpenAI

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up before a slow answer is expected here.
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without TCP_NODELAY, Nagle + delayed ACK
    # add ~40 ms to every answer.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        fake = self.server.fake
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.rstrip("/") != "/v1/embeddings":
            self._error(404, "not found", "unknown_url")
            return
        try:
            req = json.loads(body)
            inputs = req["input"]
            inputs = [inputs] if isinstance(inputs, str) else list(inputs)
        except (ValueError, KeyError, TypeError):
            self._error(400, "could not parse the JSON body", "invalid_json")
            return
        counts = [tokens.count_tokens(t) if isinstance(t, str) else len(t) for t in inputs]
        reply = fake._next()
        # Decide and count first: a slow answer is counted on arrival, like a real server.
        problem: tuple[str, str | None] | None = None
        if reply.reset:
            status = 0
        elif self.headers.get("Authorization") != f"Bearer {fake.api_key}":
            status = 401
        elif reply.status != 200:
            status = reply.status
        else:
            problem = fake._validate(inputs, counts)
            status = 400 if problem else 200
        fmt = req.get("encoding_format") if isinstance(req, dict) else None
        fake._record(len(inputs), sum(counts), status, fmt if isinstance(fmt, str) else None)
        if reply.delay:
            fake._stopping.wait(reply.delay)
        if status == 0:
            # SO_LINGER 0: close() sends RST, as a crashed proxy would.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        if status == 401:
            self._error(401, "Incorrect API key provided", "invalid_api_key")
            return
        if problem is not None:
            self._error(400, problem[0], "invalid_request_error", problem[1])
            return
        if status != 200:
            self._error(status, reply.message, reply.code, reply.param, reply)
            return
        dims = int(req.get("dimensions") or fake.default_dims)
        vecs = np.asarray(HashingEmbedder(dims).embed(inputs), dtype="<f4")
        fmt = fake.answer_format
        b64 = req.get("encoding_format") == "base64" if fmt == "request" else fmt == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                # Floats as a real server writes float32s: shortest round-trip decimals.
                "embedding": base64.b64encode(v.tobytes()).decode() if b64 else v,
            }
            for i, v in enumerate(vecs)
        ]
        total = sum(counts)
        payload = {
            "object": "list",
            "data": data,
            "model": req.get("model", ""),
            "usage": {"prompt_tokens": total, "total_tokens": total},
        }
        raw = orjson.dumps(payload, option=orjson.OPT_SERIALIZE_NUMPY)
        if reply.garble:
            raw = raw[: len(raw) // 2]
        self._send_raw(200, raw)

    def _error(
        self,
        status: int,
        message: str,
        code: str | None,
        param: str | None = None,
        reply: Reply | None = None,
    ) -> None:
        headers = {}
        if reply is not None and reply.retry_after is not None:
            headers["Retry-After"] = reply.retry_after
        if reply is not None and reply.retry_after_ms is not None:
            headers["retry-after-ms"] = reply.retry_after_ms
        err = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
        self._send(status, {"error": err}, headers)

    def _send(self, status: int, payload: object, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode(), headers)

    def _send_raw(self, status: int, raw: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(raw)
        except OSError:  # the client gave up (timeout) before we answered
            self.close_connection = True


class FakeOpenAI:
    """The server and its script. Use as a context manager, or start()/stop()."""

    def __init__(self, api_key: str = "sk-test", default_dims: int = 1536) -> None:
        self.api_key = api_key
        self.default_dims = default_dims
        self.bad_marker: str | None = None
        self.bad_marker_reports_index = False  # send error.param = "input[i]"
        self.throttle_every = 0  # every Nth request -> 429 (0 = off)
        self.throttle_retry_after_ms = "10"
        self.answer_format = "request"  # "request" | "float" | "base64"
        self.delay = 0.0  # seconds before every answer (a provider's round trip)
        self._state = _State()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        # A short poll interval: shutdown() waits up to one interval, once per test.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wake slow answers
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting and counters ------------------------------------------------------

    def push(self, reply: Reply, times: int = 1) -> None:
        """The next `times` requests get `reply` (after any already pushed)."""
        with self._lock:
            self._state.script.extend([reply] * times)

    def reset_counters(self) -> None:
        with self._lock:
            self._state.log.clear()
            self._state.seq = 0

    @property
    def log(self) -> list[Seen]:
        with self._lock:
            return list(self._state.log)

    @property
    def requests(self) -> int:
        return len(self.log)

    @property
    def inputs(self) -> int:
        return sum(s.inputs for s in self.log)

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.log)

    def statuses(self) -> list[int]:
        return [s.status for s in self.log]

    # -- used by the handler -----------------------------------------------------------

    def _next(self) -> Reply:
        with self._lock:
            if self._state.script:
                return self._state.script.popleft()
            self._state.seq += 1
            if self.throttle_every and self._state.seq % self.throttle_every == 0:
                return Reply(
                    status=429,
                    retry_after_ms=self.throttle_retry_after_ms,
                    code="rate_limit_exceeded",
                    message="Rate limit reached for requests",
                )
            return Reply(delay=self.delay)

    def _record(self, n_inputs: int, n_tokens: int, status: int, encoding: str | None) -> None:
        with self._lock:
            self._state.log.append(Seen(time.monotonic(), n_inputs, n_tokens, status, encoding))

    def _validate(self, inputs: list[Any], counts: list[int]) -> tuple[str, str | None] | None:
        if not inputs or len(inputs) > MAX_INPUTS:
            return f"input must hold 1 to {MAX_INPUTS} items, got {len(inputs)}", "input"
        if sum(counts) > MAX_REQUEST_TOKENS:
            return f"max {MAX_REQUEST_TOKENS} tokens per request, got {sum(counts)}", "input"
        for i, (text, n) in enumerate(zip(inputs, counts, strict=True)):
            if n > MAX_INPUT_TOKENS:
                return f"input[{i}] is over {MAX_INPUT_TOKENS} tokens", f"input[{i}]"
            if text == "":
                return f"input[{i}] is empty", f"input[{i}]"
            if self.bad_marker and isinstance(text, str) and self.bad_marker in text:
                param = f"input[{i}]" if self.bad_marker_reports_index else None
                return "'$.input' is invalid", param
        return None


def main() -> None:
    """Serve in this process until killed (the bench runs it beside the worker):
    python -m tests.support.openai_server --delay 0.1 --format float --url-file PATH"""
    import argparse
    import signal
    from pathlib import Path

    ap = argparse.ArgumentParser()
    ap.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    ap.add_argument("--format", default="request", choices=["request", "float", "base64"])
    ap.add_argument("--url-file", required=True, help="where to write the base URL when ready")
    args = ap.parse_args()
    fake = FakeOpenAI()
    fake.delay = args.delay
    fake.answer_format = args.format
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with fake:
        Path(args.url_file).write_text(fake.base_url)
        stop.wait()
        # What the benchmark's worker asked for: requests and texts (batch sizes).
        print(f"fake openai: {fake.requests} requests, {fake.inputs} inputs", file=sys.stderr)


if __name__ == "__main__":
    main()


def make(fake: FakeOpenAI, **kw: Any) -> OpenAIEmbedder:
    """memsieve's OpenAI embedder against `fake`, with millisecond backoffs (override any
    argument with `kw`)."""
    from memsieve.embedders.openai import OpenAIEmbedder

    args: dict[str, Any] = {
        "api_key": "sk-test",
        "base_url": fake.base_url,
        "timeout": 2.0,
        "backoff_base": 0.001,
        "backoff_max": 0.01,
    }
    args.update(kw)
    return OpenAIEmbedder(**args)

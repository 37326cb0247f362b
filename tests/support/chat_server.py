"""A local OpenAI-compatible chat-completions server for the LLM judge's tests and bench.

Real HTTP on 127.0.0.1 at a random port, served from a thread, so the real `openai` client
runs against it unchanged. POST /v1/chat/completions reads the judge's JSON pairs from the
last user message and answers, per pair: "same" when the two texts are equal ignoring case
and punctuation, "update" when the new text has the word "now", else "different".

Scripting, per test:
    fake.push(ChatReply(status=429, retry_after="0.05"), times=2)  # the next 2 requests
    fake.push(ChatReply(delay=1.0))                                 # slow answer
    fake.push(ChatReply(content="I think they are the same!"))     # nonsense answer
    fake.push(ChatReply(refusal="I can't help with that."))        # a refusal
    fake.push(ChatReply(status=503))                                # a server error
Counters: `requests` (answered or not), `pairs` (pairs received).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ChatReply:
    status: int = 200
    delay: float = 0.0
    retry_after: str | None = None
    content: str | None = None  # the answer's text instead of the computed verdicts
    refusal: str | None = None


def rule_verdict(old: str, new: str) -> str:
    def norm(t: str) -> str:
        return re.sub(r"[^a-z0-9 ]", "", t.lower()).strip()

    if norm(old) == norm(new):
        return "same"
    if re.search(r"\bnow\b", new.lower()):
        return "update"
    return "different"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_POST(self) -> None:  # noqa: N802
        fake = self.server.fake
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        with fake.lock:
            fake.requests += 1
            reply = fake.script.popleft() if fake.script else ChatReply()
        if reply.delay:
            time.sleep(reply.delay)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        if reply.status != 200:
            headers = {"retry-after": reply.retry_after} if reply.retry_after else {}
            self._send(
                reply.status,
                {"error": {"message": "scripted failure", "type": "server_error", "code": None}},
                headers,
            )
            return
        req = json.loads(body)
        user = [m for m in req["messages"] if m["role"] == "user"][-1]["content"]
        pairs = json.loads(user)["pairs"]
        with fake.lock:
            fake.pairs += len(pairs)
        if reply.content is not None:
            content: str | None = reply.content
        elif reply.refusal is not None:
            content = None
        else:
            content = json.dumps(
                {
                    "verdicts": [
                        {"id": p["id"], "verdict": rule_verdict(p["old"], p["new"])} for p in pairs
                    ]
                }
            )
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reply.refusal is not None:
            message["refusal"] = reply.refusal
        self._send(
            200,
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": req["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            },
        )

    def _send(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeChat

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up before a slow answer is expected here.
        pass


class FakeChat:
    """Start with `with FakeChat() as fake:`; `fake.base_url` is the client's base_url."""

    def __init__(self) -> None:
        self.script: deque[ChatReply] = deque()
        self.lock = threading.Lock()
        self.requests = 0
        self.pairs = 0
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}/v1"

    def push(self, reply: ChatReply, times: int = 1) -> None:
        with self.lock:
            self.script.extend([reply] * times)

    def __enter__(self) -> FakeChat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

"""A fake OpenAI-compatible chat-completions server on loopback, for tests that go over the wire."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ChatHandler(BaseHTTPRequestHandler):
    """Answers each POST with one chat completion; subclasses say what the assistant writes."""

    disable_nagle_algorithm = True
    usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}

    def answer(self, body: dict[str, Any], user: str) -> str:
        raise NotImplementedError

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        payload = {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": self.answer(body, user)}}],
            "usage": self.usage,
        }  # fmt: skip
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def serve(handler: type[ChatHandler]) -> Iterator[str]:
    """The server's base URL (…/v1) while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()

"""A local HTTP server on 127.0.0.1 that replays a recorded exchange, one response per request.

Each scripted step is {"status", "headers"?, "body"} (and optionally "expect": a substring the
request body must contain). Requests are recorded (path, headers, JSON body) for assertions.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

EXCHANGES = Path(__file__).parent / "exchanges"


def load_exchange(name: str) -> list[dict[str, Any]]:
    return json.loads((EXCHANGES / name).read_text("utf-8"))["steps"]


class ReplayServer:
    def __init__(self, steps: list[dict[str, Any]]):
        self.steps = list(steps)
        self.requests: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                with owner._lock:
                    n = len(owner.requests)
                    owner.requests.append(
                        {
                            "path": self.path,
                            "headers": {k.lower(): v for k, v in self.headers.items()},
                            "body": json.loads(raw or b"null"),
                        }
                    )
                    step = owner.steps[n] if n < len(owner.steps) else None
                if step is None:
                    owner.problems.append(f"request {n + 1} beyond the {len(owner.steps)} scripted steps")
                    step = {"status": 500, "body": {"error": {"message": "replay exhausted"}}}
                elif step.get("expect") and step["expect"] not in raw.decode():
                    owner.problems.append(f"request {n + 1} lacks {step['expect']!r}")
                payload = json.dumps(step["body"]).encode()
                self.send_response(step["status"])
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for k, v in step.get("headers", {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests]

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

"""A raw-socket HTTP client for the framing tests: the exact bytes sent and received."""

from __future__ import annotations

import json
import socket
from typing import Any


def exchange(port: int, request: bytes, *, timeout: float = 10.0) -> bytes:
    """Send `request` bytes and read until the server closes or `timeout` passes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        chunks = []
        try:
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                chunks.append(data)
                if _complete(b"".join(chunks)):
                    break
        except TimeoutError:
            pass
    return b"".join(chunks)


def _complete(raw: bytes) -> bool:
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value.strip())
    return False


def request(method: str, path: str, body: Any = None, *, headers: dict[str, str] | None = None) -> bytes:
    data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
             f"Content-Length: {len(data)}", "Connection: close"]  # fmt: skip
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def parse(raw: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """(status, header lines as raw (name, value) pairs, body)."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    pairs = []
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        pairs.append((name.strip(), value.strip()))
    return status, pairs, body

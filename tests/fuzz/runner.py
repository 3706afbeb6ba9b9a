"""Send fuzz requests over raw HTTP and sort the answers: ok (2xx), client error (4xx in
Elasticsearch's shape), bad shape (an error body without root_cause/type/reason/status), server
error (5xx), dropped (no parsable answer) and slow (over `slow_s`)."""

from __future__ import annotations

import json
import socket
import time
from collections import Counter
from dataclasses import dataclass, field

from generators import Request

OUTCOMES = ("ok", "4xx", "5xx", "bad_shape", "dropped", "slow")


@dataclass
class Tally:
    by_class: dict[str, Counter] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # (class, outcome, request head)

    def add(self, cls: str, outcome: str, seconds: float, req: Request) -> None:
        self.by_class.setdefault(cls, Counter())[outcome] += 1
        self.latencies.append(seconds)
        if outcome in ("5xx", "bad_shape", "dropped", "slow"):
            self.failures.append((cls, outcome, f"{req[0]} {req[1][:80]} {req[2][:160]!r}"))

    def total(self, outcome: str) -> int:
        return sum(c[outcome] for c in self.by_class.values())

    def p99(self) -> float:
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, int(0.99 * len(xs)))] if xs else 0.0


def send(port: int, req: Request, timeout: float) -> tuple[int | None, bytes]:
    method, path, body = req
    try:
        path_bytes = path.encode("utf-8", "surrogatepass")
    except UnicodeEncodeError:
        path_bytes = path.encode("utf-8", "replace")
    from urllib.parse import quote

    target = quote(path_bytes, safe="/_*,<>{}-.")
    head = (f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()  # fmt: skip
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(head + body)
            chunks = []
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                chunks.append(data)
    except (OSError, TimeoutError):
        return None, b""
    raw = b"".join(chunks)
    try:
        status = int(raw.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None, raw
    return status, raw.partition(b"\r\n\r\n")[2]


def classify(status: int | None, body: bytes) -> str:
    if status is None:
        return "dropped"
    if status < 300:
        return "ok"
    try:
        doc = json.loads(body)
        err = doc["error"]
        good = isinstance(err, dict) and {"root_cause", "type", "reason"} <= set(err) and doc["status"] == status
    except (ValueError, KeyError, TypeError):
        good = False
    if status >= 500:
        return "5xx"
    return "4xx" if good else "bad_shape"


def run(port: int, reqs: list[tuple[str, Request]], *, timeout: float = 30.0, slow_s: float = 10.0) -> Tally:
    tally = Tally()
    for cls, req in reqs:
        started = time.perf_counter()
        status, body = send(port, req, timeout)
        took = time.perf_counter() - started
        outcome = classify(status, body)
        if outcome in ("ok", "4xx") and took > slow_s:
            outcome = "slow"
        tally.add(cls, outcome, took, req)
    return tally

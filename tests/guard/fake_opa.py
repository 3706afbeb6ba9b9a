"""A stand-in for the `opa` binary, for testing soclab's opa engine plumbing only.

No real opa binary can be installed here, so this script speaks the parts of
opa's command line and REST API that soclab uses, with the same JSON shapes
(`opa check/test/eval --format json`, `opa run --server` with GET /health and
POST /v1/data/<path>), and evaluates with regorus underneath. It proves the
process handling, the protocol and the fail-closed paths, not OPA's semantics.

Behaviour switches (environment): FAKE_OPA_DELAY_MS delays every decision;
FAKE_OPA_CRASH_AFTER=n makes the server exit after n decisions;
FAKE_OPA_UNDEFINED=1 answers every query as undefined.
"""

from __future__ import annotations

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import regorus


def _engine(paths: list[str]) -> regorus.Engine:
    e = regorus.Engine()
    for p in paths:
        if p.endswith(".rego"):
            e.add_policy(p, Path(p).read_text())
        elif p.endswith(".json"):
            e.add_data(json.loads(Path(p).read_text()))
    return e


def _error_location(exc: Exception) -> dict:
    text = str(exc)
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("-->"):
            file, row, col = line[3:].strip().rsplit(":", 2)
            return {"file": file, "row": int(row), "col": int(col)}
    return {}


def _query(engine: regorus.Engine, query: str, inp: object) -> object:
    if os.environ.get("FAKE_OPA_UNDEFINED"):
        return None
    delay = float(os.environ.get("FAKE_OPA_DELAY_MS", "0"))
    if delay:
        time.sleep(delay / 1000)
    engine.set_input(inp)
    return engine.eval_rule(query)


def cmd_check(paths: list[str]) -> int:
    try:
        _engine(paths)
    except Exception as exc:
        msg = str(exc).split("Stack backtrace:")[0].strip().splitlines()[-1]
        print(
            json.dumps(
                {"errors": [{"code": "rego_parse_error", "message": msg, "location": _error_location(exc)}]}
            )
        )
        return 1
    return 0


def cmd_test(paths: list[str]) -> int:
    import re

    e = _engine(paths)
    e.set_input({})
    out, failed = [], False
    for p in paths:
        if not p.endswith(".rego"):
            continue
        src = Path(p).read_text()
        pkg = re.search(r"^package\s+(\S+)", src, re.MULTILINE).group(1)
        done = set()
        for m in re.finditer(r"^(test_\w+)", src, re.MULTILINE):
            name = m.group(1)
            if name in done:
                continue
            done.add(name)
            row = src.count("\n", 0, m.start()) + 1
            r = {
                "location": {"file": p, "row": row, "col": 1},
                "package": f"data.{pkg}",
                "name": name,
                "duration": 1000,
            }
            try:
                if e.eval_rule(f"data.{pkg}.{name}") is not True:
                    r["fail"] = True
            except Exception as exc:
                r["error"] = {"code": "eval_error", "message": str(exc).split("Stack backtrace:")[0].strip()}
            failed |= "fail" in r or "error" in r
            out.append(r)
    print(json.dumps(out))
    return 2 if failed else 0


def cmd_eval(argv: list[str]) -> int:
    paths, query, i = [], None, 0
    while i < len(argv):
        a = argv[i]
        if a in ("--data", "-d"):
            paths.append(argv[i + 1])
            i += 2
            continue
        if a == "--format":
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        query = a
        i += 1
    value = _query(_engine(paths), query, json.loads(sys.stdin.read() or "null"))
    if value is None:
        print("{}")
    else:
        print(
            json.dumps(
                {
                    "result": [
                        {"expressions": [{"value": value, "text": query, "location": {"row": 1, "col": 1}}]}
                    ]
                }
            )
        )
    return 0


def cmd_run(argv: list[str]) -> int:
    addr, paths, i = "127.0.0.1:8181", [], 0
    while i < len(argv):
        a = argv[i]
        if a in ("--addr", "-a", "--log-level"):
            if a != "--log-level":
                addr = argv[i + 1]
            i += 2
            continue
        if not a.startswith("-"):
            paths.append(a)
        i += 1
    engine = _engine(paths)
    crash_after = int(os.environ.get("FAKE_OPA_CRASH_AFTER", "0"))
    served = [0]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def _send(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send(200, {}) if self.path == "/health" else self._send(404, {"code": "not_found"})

        def do_POST(self) -> None:
            if crash_after and served[0] >= crash_after:
                os._exit(3)
            served[0] += 1
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if not self.path.startswith("/v1/data/"):
                return self._send(404, {"code": "not_found"})
            query = "data." + self.path.removeprefix("/v1/data/").replace("/", ".")
            try:
                value = _query(engine, query, body.get("input"))
            except Exception as exc:
                return self._send(500, {"code": "internal_error", "message": str(exc)[:300]})
            self._send(200, {} if value is None else {"result": value})

        def log_message(self, *args: object) -> None:
            pass

    host, port = addr.rsplit(":", 1)
    # One thread: a regorus engine must stay on the thread that made it.
    HTTPServer((host, int(port)), Handler).serve_forever()
    return 0


def main(argv: list[str]) -> int:
    cmd, rest = argv[0], argv[1:]
    if cmd == "version":
        print("Version: fake-for-tests")
        return 0
    files = [a for a in rest if not a.startswith("-") and a != "json"]
    if cmd == "check":
        return cmd_check(files)
    if cmd == "test":
        return cmd_test(files)
    if cmd == "eval":
        return cmd_eval(rest)
    if cmd == "run":
        return cmd_run(rest)
    print(f"unknown command {cmd}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

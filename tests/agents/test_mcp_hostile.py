"""`soclab mcp` over streamable HTTP against hostile clients (issue 19): malformed JSON-RPC, huge
and deeply nested bodies, unknown tools and methods each get an answer, and the server goes on; a
slow tool call does not stall the others, and a cancelled call has its store work stopped."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import time
from typing import Any

from pytest_soclab.bridge.mcp_server import build_server, serving_http

from .fake_tools import FakeTools

VERSION = "2025-06-18"
ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


class SlowTools(FakeTools):
    """FakeTools where ES|QL `SLOW` waits until released or interrupted (a runaway query)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.started = threading.Event()
        self.interrupted = threading.Event()

    def call(self, name: str, /, **args: Any) -> dict[str, Any]:
        if name == "esql_query" and args.get("query") == "SLOW":
            self.started.set()
            self.release.wait(30)
            return {"columns": [], "values": []}
        return super().call(name, **args)

    def interrupt(self) -> None:
        self.interrupted.set()
        self.release.set()


def _post(url: str, body: bytes | dict[str, Any], session: str | None = None) -> tuple[int, dict[str, str], bytes]:
    host, _, rest = url.removeprefix("http://").partition("/")
    name, _, port = host.rpartition(":")
    conn = http.client.HTTPConnection(name, int(port), timeout=20)
    headers = dict(ACCEPT)
    if session:
        headers.update({"mcp-session-id": session, "mcp-protocol-version": VERSION})
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    conn.request("POST", "/" + rest, body=data, headers=headers)
    resp = conn.getresponse()
    out = resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    conn.close()
    return out


def _message(raw: bytes) -> dict[str, Any]:
    """The JSON-RPC message of a plain JSON or a server-sent-events answer."""
    text = raw.decode()
    if text.lstrip().startswith("{"):
        return json.loads(text)
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return json.loads(data[-1])


def _open_session(url: str) -> str:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    status, headers, _ = _post(url, init)
    assert status == 200
    session = headers["mcp-session-id"]
    assert _post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)[0] == 202
    return session


def _serve(tools: Any, client: Any) -> Any:
    async def main() -> Any:
        async with serving_http(build_server(tools)) as url:
            return await asyncio.to_thread(client, url)

    return asyncio.run(main())


def _call(i: int, name: str, arguments: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def test_malformed_and_hostile_requests_are_answered_and_the_session_goes_on() -> None:
    def client(url: str) -> list[tuple[str, int, Any]]:
        session = _open_session(url)
        hostile: dict[str, bytes | dict[str, Any]] = {
            "not json": b"{not json",
            "null": b"null",
            "deep array": b"[" * 100_000,
            "deep arguments": b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"es_search","arguments":'
            + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"}}",
            "invalid utf-8": b'{"jsonrpc":"2.0","id":6,"method":"tools/list","x":"\xff\xfe"}',
            "huge body": _call(7, "esql_query", {"query": 'ROW a = "' + "x" * 6_000_000 + '"'}),
            "unknown tool": _call(9, "format_disk", {}),
            "arguments not an object": _call(10, "es_search", "x"),
            "unknown method": {"jsonrpc": "2.0", "id": 11, "method": "foo/bar"},
        }
        out = []
        for what, body in hostile.items():
            status, _, raw = _post(url, body, session)
            out.append((what, status, raw))
        status, _, raw = _post(url, {"jsonrpc": "2.0", "id": 12, "method": "tools/list"}, session)
        out.append(("tools/list after", status, raw))
        return out

    answers = {what: (status, raw) for what, status, raw in _serve(FakeTools(), client)}
    for what in ("not json", "null", "deep array", "deep arguments", "invalid utf-8"):
        status, raw = answers[what]
        assert status == 400, (what, raw)
        assert _message(raw)["error"]["code"] in (-32700, -32600, -32602), (what, raw)
    assert answers["huge body"][0] == 413
    unknown = _message(answers["unknown tool"][1])["result"]
    assert unknown["isError"] and "unknown tool [format_disk]" in unknown["structuredContent"]["error"]["reason"]
    assert _message(answers["arguments not an object"][1])["error"]["code"] == -32602
    assert _message(answers["unknown method"][1])["error"]["code"] == -32601
    status, raw = answers["tools/list after"]
    assert status == 200 and "esql_query" in [t["name"] for t in _message(raw)["result"]["tools"]]


def _start_slow(url: str, tools: SlowTools) -> tuple[str, threading.Thread]:
    """A session, and the SLOW call (request id 1) running in it."""
    session = _open_session(url)
    slow = threading.Thread(target=_post, args=(url, _call(1, "esql_query", {"query": "SLOW"}), session))
    slow.start()
    assert tools.started.wait(10)
    return session, slow


def test_a_slow_tool_call_does_not_stall_the_server() -> None:
    tools = SlowTools()

    def client(url: str) -> float:
        session, slow = _start_slow(url, tools)
        started = time.perf_counter()
        status, _, raw = _post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)
        took = time.perf_counter() - started
        assert status == 200 and _message(raw)["result"]["tools"]
        assert not tools.release.is_set()  # answered while the slow call still ran
        tools.release.set()
        slow.join(10)
        return took

    assert _serve(tools, client) < 5


def test_a_cancelled_call_has_its_work_interrupted() -> None:
    tools = SlowTools()

    def client(url: str) -> None:
        session, slow = _start_slow(url, tools)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "user"}}
        assert _post(url, cancel, session)[0] == 202
        assert tools.interrupted.wait(10), "the cancelled call's work was not interrupted"
        slow.join(10)

    _serve(tools, client)

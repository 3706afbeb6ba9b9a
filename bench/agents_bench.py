"""What the agent adapters cost per tool call and per run, apart from the agent's own thinking.

    PYTHONPATH=src python bench/agents_bench.py [--calls 300]

- cmd:   a JSON-lines agent process making N tool calls (spawn to report, and per call);
- mcp:   N tool calls by the MCP SDK's client over streamable HTTP (legacy and 2026 protocol eras),
         and a whole mcp:COMMAND run (server start, agent spawn and connect, one call, report);
- llm:   the openai:MODEL loop against a local fake server answering N tool-call turns
         (HTTP round trip, parsing, the tool, result serialization);
- bounded_json on a 10,000-hit search result.
The tools answer at once from memory, so the figures are the adapters' own overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pytest_soclab.agents.command import command_agent
from pytest_soclab.agents.mcp_agent import mcp_agent
from pytest_soclab.agents.openai_agent import openai_agent
from pytest_soclab.llm.serialize import bounded_json
from pytest_soclab.bridge.mcp_server import build_server, serving_http
from pytest_soclab.models.tools import READ_TOOLS, REPORT_TOOL, tool_specs

TRIGGER = {"type": "alert", "prompt": "bench", "pivot": {"host.name": "web-01"}}
RESULT = {
    "took": 2,
    "is_partial": False,
    "columns": [{"name": "host.name", "type": "keyword"}, {"name": "process.pid", "type": "long"}],
    "values": [["web-01", 4242 + i] for i in range(20)],
}


class MemoryTools:
    def __init__(self) -> None:
        self.calls = 0

    def specs(self) -> list[dict[str, Any]]:
        return tool_specs((*READ_TOOLS, REPORT_TOOL))

    def call(self, name: str, /, **args: Any) -> dict[str, Any]:
        self.calls += 1
        return {"acknowledged": True} if name == REPORT_TOOL else RESULT


CMD_AGENT = """
import json, sys
n = int(sys.argv[1])
start = json.loads(sys.stdin.readline())
for i in range(n):
    call = {"type": "call", "id": i, "tool": "esql_query", "args": {"query": "FROM logs-*"}}
    print(json.dumps(call), flush=True)
    json.loads(sys.stdin.readline())
print(json.dumps({"type": "report", "markdown": "done"}), flush=True)
"""

MCP_AGENT = """
import asyncio, os
from mcp import Client
async def main():
    async with Client(os.environ["SOCLAB_MCP_URL"]) as c:
        await c.call_tool("esql_query", {"query": "FROM logs-*"})
        await c.call_tool("submit_report", {"markdown": "done"})
asyncio.run(main())
"""


def bench_cmd(n: int, tmp: Path) -> dict[str, float]:
    script = tmp / "cmd_agent.py"
    script.write_text(CMD_AGENT)
    empty_runs, full_runs = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        asyncio.run(command_agent([sys.executable, str(script), "0"], timeout=60)(TRIGGER, MemoryTools()))
        empty_runs.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        asyncio.run(command_agent([sys.executable, str(script), str(n)], timeout=60)(TRIGGER, MemoryTools()))
        full_runs.append(time.perf_counter() - t0)
    empty, full = statistics.median(empty_runs), statistics.median(full_runs)
    return {"run_without_calls_s": empty, "per_call_ms": (full - empty) / n * 1000}


async def _mcp_calls(n: int, mode: str) -> list[float]:
    from mcp import Client

    server = build_server(MemoryTools(), trigger=TRIGGER)
    async with serving_http(server) as url, Client(url, mode=mode) as client:
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            await client.call_tool("esql_query", {"query": "FROM logs-*"})
            times.append(time.perf_counter() - t0)
        return times


def bench_mcp(n: int, tmp: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    for mode in ("legacy", "auto"):
        times = sorted(asyncio.run(_mcp_calls(n, mode)))
        out[f"per_call_{mode}_median_ms"] = statistics.median(times) * 1000
        out[f"per_call_{mode}_p95_ms"] = times[int(len(times) * 0.95)] * 1000
    script = tmp / "mcp_agent.py"
    script.write_text(MCP_AGENT)
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        asyncio.run(mcp_agent([sys.executable, str(script)], timeout=60)(TRIGGER, MemoryTools()))
        runs.append(time.perf_counter() - t0)
    out["whole_run_s"] = statistics.median(runs)
    return out


class _FakeOpenAI(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    turns = 0

    def log_message(self, *a: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        done = sum(1 for m in body["messages"] if m["role"] == "tool") >= type(self).turns
        if done:
            message: dict[str, Any] = {"role": "assistant", "content": "report"}
        else:
            args = json.dumps({"query": "FROM logs-*"})
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "esql_query", "arguments": args}}
                ],
            }
        payload = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "bench",
                "choices": [
                    {"index": 0, "message": message, "finish_reason": "stop" if done else "tool_calls"}
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def bench_llm(n: int) -> dict[str, float]:
    _FakeOpenAI.turns = n
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeOpenAI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        agent = openai_agent("bench", base_url=url, api_key="k", max_turns=n + 1)
        t0 = time.perf_counter()
        report = asyncio.run(agent(TRIGGER, MemoryTools()))
        elapsed = time.perf_counter() - t0
        assert report == {"markdown": "report"} and agent.turns == n + 1
    finally:
        server.shutdown()
    return {"per_turn_ms": elapsed / (n + 1) * 1000, "turns": n + 1}


def bench_bounded() -> dict[str, float]:
    hits = [
        {"_index": "logs-x", "_id": str(i), "_source": {"host": {"name": f"h{i}"}, "message": "m" * 80}}
        for i in range(10_000)
    ]
    value = {"took": 5, "hits": {"total": {"value": 10_000, "relation": "eq"}, "hits": hits}}
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        text = bounded_json(value, 12_000)
        times.append(time.perf_counter() - t0)
    assert len(text) <= 12_000
    return {"bounded_json_10k_hits_ms": statistics.median(times) * 1000}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = {
            "cmd": bench_cmd(args.calls, Path(tmp)),
            "mcp": bench_mcp(args.calls, Path(tmp)),
            "llm": bench_llm(min(args.calls, 100)),
            "serialize": bench_bounded(),
        }
    for group, figures in results.items():
        for key, value in figures.items():
            print(f"{group:10s} {key:28s} {value:10.2f}")


if __name__ == "__main__":
    main()

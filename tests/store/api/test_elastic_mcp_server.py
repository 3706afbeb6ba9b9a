"""The official Elastic MCP server (`@elastic/mcp-server-elasticsearch`, pinned in tests/npm),
unmodified, against `soclab serve`: every one of its tools answers without an error.

Skipped when node or the package is absent (`.ci/run` installs it with npm)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from store_testdata import DOCS, PROC

PACKAGE = Path(__file__).resolve().parents[2] / "npm" / "node_modules" / "@elastic" / "mcp-server-elasticsearch"
ENTRY = PACKAGE / "dist" / "index.js"
_SERVE = "import sys; from pytest_soclab.cli import main; sys.exit(main(sys.argv[1:]))"

pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the Elastic MCP server needs it"),
    pytest.mark.skipif(not ENTRY.is_file(), reason="@elastic/mcp-server-elasticsearch is not installed: "
                       "run `npm install` in tests/npm (.ci/run does)"),  # fmt: skip
]


@pytest.fixture(scope="module")
def soclab_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`soclab serve` in its own process, over the store tests' documents as NDJSON files."""
    folder = tmp_path_factory.mktemp("serve")
    files: dict[str, list[str]] = {}
    for index, doc_id, source in DOCS:
        files.setdefault(index, []).append(json.dumps({"_id": doc_id, "_source": source}))
    args = []
    for index, lines in files.items():
        path = folder / f"{index.strip('.')}.ndjson"
        path.write_text("\n".join(lines) + "\n")
        args += ["--index", f"{index}={path}"]
    proc = subprocess.Popen([sys.executable, "-c", _SERVE, "serve", *args, "--port", "0"],
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stderr is not None
    line = proc.stderr.readline()
    m = re.search(r"(http://[\d.]+:\d+)", line)
    if not m:
        proc.kill()
        pytest.fail(f"soclab serve did not start: {line}{proc.stderr.read()}")
    yield m.group(1)
    proc.terminate()
    proc.wait(10)


class _Stdio:
    """MCP's stdio transport by hand: one JSON-RPC message a line."""

    def __init__(self, url: str):
        env = {**os.environ, "ES_URL": url, "OTEL_SDK_DISABLED": "true"}
        self.proc = subprocess.Popen(["node", str(ENTRY)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(f"the MCP server exited: {self.proc.stderr.read() if self.proc.stderr else ''}")
            msg = json.loads(line)  # a line that is not JSON-RPC would break the protocol: a failure too
            if msg.get("id") == self.next_id:
                assert "error" not in msg, msg
                return msg["result"]

    def notify(self, method: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture(scope="module")
def mcp(soclab_serve: str) -> Iterator[_Stdio]:
    client = _Stdio(soclab_serve)
    init = client.request("initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                                         "clientInfo": {"name": "soclab-test", "version": "0"}})  # fmt: skip
    assert init["serverInfo"]["name"]
    client.notify("notifications/initialized")
    yield client
    client.close()


def _call(mcp: _Stdio, tool: str, args: dict[str, Any]) -> list[str]:
    result = mcp.request("tools/call", {"name": tool, "arguments": args})
    texts = [c["text"] for c in result["content"]]
    assert not any(t.startswith("Error:") for t in texts), texts
    return texts


def test_it_lists_its_four_tools(mcp: _Stdio) -> None:
    names = {t["name"] for t in mcp.request("tools/list", {})["tools"]}
    assert names == {"list_indices", "get_mappings", "search", "get_shards"}


def test_every_tool_answers(mcp: _Stdio) -> None:
    texts = _call(mcp, "list_indices", {"indexPattern": "*"})
    assert texts[0] == "Found 4 indices" and "notes" in texts[1]
    texts = _call(mcp, "get_mappings", {"index": "notes"})
    assert '"views"' in texts[1]
    texts = _call(mcp, "search", {"index": "notes", "queryBody": {"query": {"match": {"body": "fox"}}}})
    assert texts[0] == "Total results: 1, showing 1 from position 0"
    assert "body (highlighted): The quick brown <em>fox</em> jumps" in texts[1]
    texts = _call(mcp, "search", {"index": PROC, "queryBody": {"size": 0, "aggs": {"h": {"terms": {"field": "host.name"}}}}})
    assert texts[0].startswith("Total results: 8") and '"web-01"' in texts[1]
    texts = _call(mcp, "get_shards", {})
    assert texts[0] == "Found 4 shards" and '"STARTED"' in texts[1]
    texts = _call(mcp, "get_shards", {"index": "notes"})
    assert texts[0] == "Found 1 shards for index notes"

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from pytest_soclab.agents.command import AgentProcessError, AgentTimeoutError
from pytest_soclab.agents.mcp_agent import mcp_agent
from pytest_soclab.errors import SoclabError
from pytest_soclab.bridge.mcp_server import INSTRUCTIONS, build_server, check_loopback, serving_http
from pytest_soclab.models.tools import READ_TOOLS

from .fake_tools import FakeTools
from .test_openai_agent import TRIGGER

HERE = Path(__file__).parent
READ_CALLS = {
    "list_indices": {"pattern": "logs-*"},
    "get_mappings": {"index": "logs-zeek.conn-default"},
    "es_search": {
        "index": "logs-endpoint.events.process-default",
        "body": {"query": {"term": {"host.name": "db-01"}}},
    },
    "esql_query": {"query": "FROM logs-zeek.conn-default | KEEP source.ip, destination.ip"},
}


async def _round_trip(client: Client, expected_tools: FakeTools) -> list[dict]:
    """Everything a client does in an investigation; returns the structured results of the read tools."""
    listed = (await client.list_tools()).tools
    specs = expected_tools.specs()
    assert [t.name for t in listed] == [s["name"] for s in specs]
    assert [t.input_schema for t in listed] == [s["parameters"] for s in specs]
    by_name = {t.name: t for t in listed}
    assert by_name["esql_query"].annotations.read_only_hint is True
    assert by_name["wipe_host"].annotations.destructive_hint is True
    assert by_name["isolate_host"].annotations.destructive_hint is False

    results = []
    for name in READ_TOOLS:
        res = await client.call_tool(name, READ_CALLS[name])
        assert not res.is_error, res
        assert json.loads(res.content[0].text) == res.structured_content
        results.append(res.structured_content)

    missing = await client.call_tool("es_search", {"index": "logs-nope"})
    assert missing.is_error and missing.structured_content["error"]["type"] == "index_not_found_exception"
    assert missing.structured_content["status"] == 404
    denied = await client.call_tool("wipe_host", {"host": "db-01"})
    assert denied.is_error and denied.structured_content["error"]["type"] == "security_exception"
    unknown = await client.call_tool("format_disk", {})
    assert unknown.is_error and "unknown tool [format_disk]" in unknown.structured_content["error"]["reason"]
    bad = await client.call_tool("submit_report", {"findings": {}})
    assert bad.is_error and "markdown" in bad.structured_content["error"]["reason"]
    done = await client.call_tool("submit_report", {"markdown": "# Report\nbackup job on db-01 is benign."})
    assert not done.is_error and done.structured_content == {"acknowledged": True}

    prompt = await client.get_prompt("investigate")
    assert TRIGGER["prompt"] in prompt.messages[0].content.text
    resource = await client.read_resource("soclab://trigger")
    assert json.loads(resource.contents[0].text) == TRIGGER
    return results


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_http_round_trip(mode):
    tools, reports = FakeTools(), []

    async def main() -> list[dict]:
        server = build_server(tools, trigger=TRIGGER, on_report=reports.append)
        async with serving_http(server) as url:
            assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
            async with Client(url, mode=mode) as client:
                if mode == "legacy":  # the initialize handshake
                    assert client.server_info.name == "soclab"
                    assert client.instructions == INSTRUCTIONS
                    assert client.server_capabilities.tools is not None
                return await _round_trip(client, FakeTools())

    results = asyncio.run(main())
    direct = FakeTools()
    assert results == [direct.call(name, **READ_CALLS[name]) for name in READ_TOOLS]
    assert reports == [{"markdown": "# Report\nbackup job on db-01 is benign."}]
    assert [n for n, _, _ in tools.calls] == [*READ_TOOLS, "es_search", "wipe_host", "submit_report"]


def test_stdio_round_trip():
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(HERE / "mcp_stdio_server.py"), json.dumps(TRIGGER)],
        env=dict(os.environ),
    )

    async def main() -> list[dict]:
        async with Client(params, mode="legacy") as client:
            assert client.server_info.name == "soclab"
            return await _round_trip(client, FakeTools())

    results = asyncio.run(main())
    assert results[3]["values"] == [["10.0.1.15", "203.0.113.45"]]


def test_loopback_only():
    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        check_loopback(host)
    for host in ("0.0.0.0", "10.0.0.5", "example.org"):
        with pytest.raises(SoclabError, match="loopback only"):
            check_loopback(host)


def _agent(mode: str, **kw):
    return mcp_agent([sys.executable, str(HERE / "mcp_client_agent.py"), mode], **kw)


def test_mcp_agent_reports_through_submit_report(tools):
    report = asyncio.run(_agent("report", timeout=60)(TRIGGER, tools))
    assert report == {
        "markdown": "web-01 ran /tmp/.sysupdate at 2024-05-14T09:12:03.120Z.",
        "findings": {"implicated_hosts": ["web-01"]},
    }
    assert tools.reports == [report]
    assert [n for n, _, _ in tools.calls] == ["esql_query", "submit_report"]


def test_nothing_runs_after_the_report(tools, tmp_path):
    marker = tmp_path / "marker"
    report = asyncio.run(
        _agent("act-after-report", timeout=60, env={"SOCLAB_TEST_MARKER": str(marker)})(TRIGGER, tools)
    )
    assert marker.read_text() == "the investigation has ended: submit_report was accepted"
    assert tools.reports == [report]
    assert [n for n, _, _ in tools.calls] == [
        "esql_query",
        "submit_report",
    ]  # isolate_host never reached them


def test_mcp_agent_without_report(tools):
    with pytest.raises(AgentProcessError) as err:
        asyncio.run(_agent("no-report", timeout=60)(TRIGGER, tools))
    msg = str(err.value)
    assert "the agent exited with code 4 without calling submit_report" in msg
    assert "agent: found 2 rows but giving up" in msg


def test_mcp_agent_timeout(tools):
    started = time.monotonic()
    with pytest.raises(AgentTimeoutError, match=r"no report within 3 s; the process was killed") as err:
        asyncio.run(_agent("hang", timeout=3)(TRIGGER, tools))
    assert time.monotonic() - started < 8
    assert "agent: tools [" in str(err.value)


def test_mcp_agent_fatal_tool_error_ends_the_run():
    class Budgeted(FakeTools):
        def call(self, name, /, **args):
            if len(self.calls) >= 1:
                raise RuntimeError("tool-call budget of 1 exhausted")
            return super().call(name, **args)

    with pytest.raises(RuntimeError, match="budget of 1 exhausted"):
        asyncio.run(_agent("budget", timeout=60)(TRIGGER, Budgeted()))


CLI_WITH_FAKE_CASE = """
import json, sys
sys.path.insert(0, {here!r})
from fake_tools import FakeTools
import pytest_soclab.cli.mcp_cmd as mcp_cmd
mcp_cmd.case_tools = lambda args: (FakeTools(), json.loads({trigger!r}))
from pytest_soclab.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_cli_serves_a_case_on_stdio():
    code = CLI_WITH_FAKE_CASE.format(here=str(HERE), trigger=json.dumps(TRIGGER))
    params = StdioServerParameters(
        command=sys.executable, args=["-c", code, "mcp", "--case", "case-x"], env=dict(os.environ)
    )

    async def main() -> None:
        async with Client(params, mode="legacy") as client:
            assert "esql_query" in [t.name for t in (await client.list_tools()).tools]
            res = await client.call_tool("esql_query", READ_CALLS["esql_query"])
            assert res.structured_content["values"] == [["10.0.1.15", "203.0.113.45"]]

    asyncio.run(main())


def test_cli_refuses_a_non_loopback_host(capsys):
    from pytest_soclab.cli import main

    assert main(["mcp", "--case", "case-x", "--transport", "http", "--host", "0.0.0.0"]) == 2
    assert "listens on loopback only" in capsys.readouterr().err


def test_stdio_answers_malformed_messages_and_goes_on() -> None:
    """JSON-RPC's own errors for lines that are not messages (id null); the session survives them."""
    import subprocess

    code = CLI_WITH_FAKE_CASE.format(here=str(HERE), trigger=json.dumps(TRIGGER))
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    lines = [
        json.dumps(init),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "{not json",
        json.dumps({"jsonrpc": "1.0", "id": 2, "method": "tools/list"}),
        '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": ' + "[" * 50_000 + "]" * 50_000 + "}",
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "rm_rf", "arguments": {}}}),
        json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}),
    ]
    proc = subprocess.Popen([sys.executable, "-c", code, "mcp", "--case", "case-x"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("\n".join(lines) + "\n")
    proc.stdin.flush()
    answers: list[dict] = []
    deadline = time.monotonic() + 60
    # stdin stays open until the last request is answered: at end of input the SDK ends the session
    while not any(a.get("id") == 5 for a in answers) and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        answers.append(json.loads(line))
    proc.stdin.close()
    stderr = proc.stderr.read() if proc.wait(30) is not None and proc.stderr else ""
    errors = [(a["id"], a["error"]["code"]) for a in answers if "error" in a]
    assert errors == [(None, -32700), (None, -32600), (None, -32700)]
    by_id = {a["id"]: a for a in answers if a.get("id") is not None}
    assert by_id[4]["result"]["isError"] and "unknown tool [rm_rf]" in by_id[4]["result"]["content"][0]["text"]
    assert "esql_query" in [t["name"] for t in by_id[5]["result"]["tools"]]
    assert "Traceback" not in stderr

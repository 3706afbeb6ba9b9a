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

"""A small MCP agent for the mcp:COMMAND tests: it connects to SOCLAB_MCP_URL with the MCP SDK's client.

Usage: python mcp_client_agent.py MODE, MODE one of report, act-after-report, no-report, hang, budget.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from mcp import Client

MODE = sys.argv[1] if len(sys.argv) > 1 else "report"


async def main() -> int:
    trigger = json.loads(os.environ["SOCLAB_TRIGGER"])
    host = trigger["pivot"]["host.name"]
    async with Client(os.environ["SOCLAB_MCP_URL"]) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        print(f"agent: tools {names}", file=sys.stderr)
        prompt = await client.get_prompt("investigate")
        assert trigger["prompt"] in prompt.messages[0].content.text
        if MODE == "hang":
            await asyncio.sleep(3600)
        result = await client.call_tool(
            "esql_query",
            {
                "query": f'FROM logs-endpoint.events.process-default | WHERE host.name == "{host}"'
                " | KEEP @timestamp, process.executable"
            },
        )
        assert not result.is_error, result
        rows = result.structured_content["values"]
        if MODE == "no-report":
            print(f"agent: found {len(rows)} rows but giving up", file=sys.stderr)
            return 4
        if MODE == "budget":
            await client.call_tool("list_indices", {})
            return 0
        done = await client.call_tool(
            "submit_report",
            {
                "markdown": f"{host} ran {rows[-1][1]} at {rows[-1][0]}.",
                "findings": {"implicated_hosts": [host]},
            },
        )
        assert not done.is_error and done.structured_content == {"acknowledged": True}, done
        if MODE == "act-after-report":
            late = await client.call_tool("isolate_host", {"host": host})
            assert late.is_error and late.structured_content["error"]["type"] == "illegal_state_exception", (
                late
            )
            with open(os.environ["SOCLAB_TEST_MARKER"], "w") as f:
                f.write(late.structured_content["error"]["reason"])
    return 0


sys.exit(asyncio.run(main()))

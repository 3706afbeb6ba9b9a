"""`mcp:COMMAND`: an agent process that investigates through soclab's MCP server.

For each investigation the harness serves the tools over streamable HTTP on
127.0.0.1 (an ephemeral port) and starts COMMAND with:

    SOCLAB_MCP_URL   http://127.0.0.1:PORT/mcp
    SOCLAB_TRIGGER   the trigger as JSON (also the MCP prompt 'investigate' and resource soclab://trigger)

The report comes back through the submit_report tool. HTTP rather than stdio:
with stdio the agent's MCP client would have to start the server process, so
the tools would run outside the harness (away from its transcript, guard and
simulator state, and from its budget and timeout); HTTP keeps them in the
harness process and leaves the agent free to be any program with an MCP client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from typing import Any, Unpack

from pytest_soclab.agents.command import (
    AgentProcessError,
    AgentTimeoutError,
    ProcessAgent,
    ProcessOptions,
    StderrTail,
    exit_description,
    kill_group,
    spawn,
    stop,
)
from pytest_soclab.errors import ToolError
from pytest_soclab.bridge import build_server, serving_http
from pytest_soclab.models import Tools

URL_ENV = "SOCLAB_MCP_URL"
TRIGGER_ENV = "SOCLAB_TRIGGER"
DEFAULT_GRACE_S = 5.0


class _EndingTools:
    """The tools until a report is in; after it, every call is refused (the investigation has ended)."""

    def __init__(self, tools: Tools):
        self._tools = tools
        self.ended = False

    def specs(self) -> list[dict[str, Any]]:
        return self._tools.specs()

    def call(self, name: str, /, **args: Any) -> dict[str, Any]:
        if self.ended:
            raise ToolError(
                409, "illegal_state_exception", "the investigation has ended: submit_report was accepted"
            )
        return self._tools.call(name, **args)


class McpAgent(ProcessAgent):
    """An agent run as a process per investigation, pointed at a fresh MCP server.
    MCP has no way to report usage: `usage` stays empty."""

    kind = "mcp"
    default_grace = DEFAULT_GRACE_S

    def __init__(
        self, command: str | Sequence[str], *, host: str = "127.0.0.1", **options: Unpack[ProcessOptions]
    ):
        super().__init__(command, **options)
        self.host = host

    async def investigate(self, trigger: dict[str, Any], tools: Tools) -> dict[str, Any]:
        reports: list[dict[str, Any]] = []
        fatal: list[BaseException] = []
        settled = asyncio.Event()

        gated = _EndingTools(tools)

        def on_report(report: dict[str, Any]) -> None:
            gated.ended = True
            reports.append(report)
            settled.set()

        def on_fatal(exc: BaseException) -> None:
            fatal.append(exc)
            settled.set()

        server = build_server(gated, trigger=trigger, on_report=on_report, on_fatal=on_fatal)
        async with serving_http(server, self.host) as url:
            env = {
                **self.env,
                URL_ENV: url,
                TRIGGER_ENV: json.dumps(trigger, ensure_ascii=False, default=str),
            }
            proc = await spawn(self.argv, env=env, cwd=self.cwd, stdin=False, label=self.name)
            stderr, stdout = StderrTail(), StderrTail()
            drains = [
                asyncio.create_task(stderr.drain(proc.stderr)),
                asyncio.create_task(stdout.drain(proc.stdout)),
            ]
            exited = asyncio.create_task(proc.wait())
            reported = asyncio.create_task(settled.wait())
            try:
                try:
                    async with asyncio.timeout(self.timeout) as deadline:
                        await asyncio.wait({exited, reported}, return_when=asyncio.FIRST_COMPLETED)
                except TimeoutError:
                    if deadline.expired():
                        kill_group(proc)
                        await proc.wait()
                        raise AgentTimeoutError(
                            f"{self.name}: no report within {self.timeout:g} s; the process was killed"
                            + stderr.suffix()
                            + stdout.suffix("stdout")
                        ) from None
                    raise
                if fatal:
                    kill_group(proc)
                    raise fatal[0]
                if reports:
                    await stop(proc, self.grace)  # it has its acknowledgement: let it close its session
                    return reports[0]
                raise AgentProcessError(
                    f"{self.name}: the agent {exit_description(proc.returncode)}"
                    " without calling submit_report" + stderr.suffix() + stdout.suffix("stdout")
                )
            finally:
                kill_group(proc)
                for task in (exited, reported):
                    task.cancel()
                with contextlib.suppress(ProcessLookupError):
                    await proc.wait()
                for drain in drains:
                    with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                        await asyncio.wait_for(drain, 2.0)


def mcp_agent(command: str | Sequence[str], **options: Unpack[ProcessOptions]) -> McpAgent:
    """The agent for `--soclab-agent=mcp:COMMAND`."""
    return McpAgent(command, **options)

"""Run an agent on one item: sync or async, with a timeout and a tool-call budget.

Whatever the agent does (raise, hang, overspend, return garbage) ends as either a
report or an `AgentFailure` with a reason fit to show; the session goes on.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
import traceback
from typing import Any

from pytest_soclab.agents import Agent, AgentProcessError
from pytest_soclab.models import AgentReport
from pytest_soclab.run.isolated import WorkerDied, run_in_worker
from pytest_soclab.sim import Simulator


class AgentFailure(Exception):
    def __init__(self, reason: str, detail: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


def _short_traceback(exc: BaseException, frames: int = 6) -> str:
    # Frames only: the exception's own line is already the failure's headline.
    lines = traceback.format_tb(exc.__traceback__)[-frames:]
    return ("Traceback (most recent call last):\n" + "".join(lines)).rstrip()


def run_agent(agent: Agent, trigger: dict[str, Any], sim: Simulator, timeout: float, *,
              isolate: bool = False) -> AgentReport:  # fmt: skip
    sim.ends_at = time.monotonic() + timeout  # store work stops with the item's time, not after it
    if isolate:
        return _run_isolated(agent, trigger, sim, timeout)
    tools = sim.tools()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            out = agent.fn(dict(trigger), tools)
            if inspect.isawaitable(out):
                out = asyncio.run(_bounded(out, timeout))
            box["value"] = out
        except BaseException as exc:  # noqa: BLE001 - reported as the item's failure
            box["error"] = exc

    thread = threading.Thread(target=target, name=f"soclab-agent-{agent.name}", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        # A thread cannot be killed: close the tools so that a still-running agent's
        # next call fails, stop the query it may be waiting on, and move on.
        sim.stop()
        raise AgentFailure(f"agent {agent.name!r} timed out after {timeout:g}s ({len(sim.recorder.calls)} tool calls made)")
    if "error" in box:
        exc = box["error"]
        if isinstance(exc, TimeoutError | asyncio.TimeoutError):
            raise AgentFailure(f"agent {agent.name!r} timed out after {timeout:g}s")
        if isinstance(exc, AgentProcessError):
            # A process agent (cmd:, mcp:) failed: its message says how (exit status, its stderr);
            # the harness's own frames would only bury that.
            message = str(exc).removeprefix(f"{agent.name}: ")
            raise AgentFailure(f"agent {agent.name!r}: {message}")
        raise AgentFailure(f"agent {agent.name!r} raised {type(exc).__name__}: {exc}", _short_traceback(exc))
    return _finish(agent, sim, box.get("value"))


def _run_isolated(agent: Agent, trigger: dict[str, Any], sim: Simulator, timeout: float) -> AgentReport:
    try:
        kind, value = run_in_worker(agent, trigger, sim, timeout)
    except TimeoutError:
        sim.stop()
        raise AgentFailure(
            f"agent {agent.name!r} timed out after {timeout:g}s ({len(sim.recorder.calls)} tool calls made); "
            "its worker process was killed"
        ) from None
    except WorkerDied as exc:
        raise AgentFailure(f"agent {agent.name!r}: {exc.reason}") from None
    if kind == "raised":
        name, message, tb = value
        if name in ("TimeoutError", "CancelledError"):
            raise AgentFailure(f"agent {agent.name!r} timed out after {timeout:g}s")
        raise AgentFailure(f"agent {agent.name!r} raised {name}: {message}", tb.rstrip())
    return _finish(agent, sim, value)


def _finish(agent: Agent, sim: Simulator, value: Any) -> AgentReport:
    if sim.budget_spent:
        raise AgentFailure(
            f"agent {agent.name!r} exceeded its tool-call budget of {sim.scenario.max_tool_calls} calls"
            + (f" ({sim.refused_calls} more calls refused)" if sim.refused_calls else "")
        )
    if value is None and sim.submitted is not None:
        return sim.submitted
    try:
        return AgentReport.coerce(value)
    except ValueError as exc:
        raise AgentFailure(f"agent {agent.name!r} returned a malformed report: {exc}") from None


async def _bounded(awaitable: Any, timeout: float) -> Any:
    return await asyncio.wait_for(awaitable, timeout)

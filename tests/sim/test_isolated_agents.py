"""`--soclab-isolate` (issue 19): an in-process agent in a worker process; os._exit, a segfault or
a CPU spin ends that item only, a timeout kills the work, and tool calls still go through the
item's simulator (its transcript, budget and guard)."""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any

import pytest

from pytest_soclab.agents import Agent
from pytest_soclab.models.tools import ALL_TOOLS
from pytest_soclab.run.agent import AgentFailure, run_agent
from pytest_soclab.sim.actions import ActionSurface
from pytest_soclab.sim.simulator import ScenarioContext, Simulator

from test_actions import estate as sample_estate


def _sim() -> Simulator:
    actions = ActionSurface(sample_estate())
    ctx = ScenarioContext(id="ATK-x", kind="attack", allowed_tools=list(ALL_TOOLS), scope={}, max_tool_calls=10)
    return Simulator(ctx, "baseline", None, actions.estate, None, actions)  # type: ignore[arg-type]


def _run(fn: Any, timeout: float = 5.0) -> tuple[Simulator, Any]:
    sim = _sim()
    try:
        return sim, run_agent(Agent("t", fn), {"alert": "x"}, sim, timeout, isolate=True)
    except AgentFailure as exc:
        return sim, exc


def test_report_and_tool_calls_go_through_the_parent() -> None:
    def agent(trigger: dict, tools: Any) -> dict:
        try:
            tools.call("no_such_tool")
        except Exception as exc:  # noqa: BLE001
            note = type(exc).__name__
        return {"markdown": f"done {note} {os.getpid() != PARENT}", "findings": {}}

    sim, report = _run(agent)
    assert not isinstance(report, AgentFailure), report
    assert report.markdown == "done ToolError True"
    assert [c.tool for c in sim.recorder.calls] == ["no_such_tool"]


PARENT = os.getpid()


@pytest.mark.parametrize("how,expect", [
    (lambda: os._exit(7), "exited with code 7"),
    (lambda: ctypes.string_at(0), "killed by SIGSEGV"),
])  # fmt: skip
def test_a_dying_agent_ends_its_item_only(how: Any, expect: str) -> None:
    sim, out = _run(lambda trigger, tools: how())
    assert isinstance(out, AgentFailure) and expect in out.reason, out


def test_a_spinning_agent_is_killed_at_the_timeout() -> None:
    def spin(trigger: dict, tools: Any) -> None:
        while True:
            pass

    started = time.monotonic()
    sim, out = _run(spin, timeout=1.0)
    assert isinstance(out, AgentFailure) and "timed out" in out.reason and "killed" in out.reason
    assert time.monotonic() - started < 5


def test_an_exception_is_the_items_failure() -> None:
    def boom(trigger: dict, tools: Any) -> None:
        raise ValueError("nope")

    sim, out = _run(boom)
    assert isinstance(out, AgentFailure) and out.reason.endswith("raised ValueError: nope")

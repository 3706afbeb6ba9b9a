"""Calls past the tool budget are refused and counted, not stored (issue 19): a looping agent
cannot grow the transcript without bound."""

from __future__ import annotations

import pytest

from pytest_soclab.errors import ToolError
from pytest_soclab.models.tools import ALL_TOOLS
from pytest_soclab.sim.actions import ActionSurface
from pytest_soclab.sim.simulator import ScenarioContext, Simulator

from test_actions import estate as sample_estate


def test_calls_past_the_budget_are_refused_and_counted() -> None:
    actions = ActionSurface(sample_estate())
    ctx = ScenarioContext(id="ATK-x", kind="attack", allowed_tools=list(ALL_TOOLS), scope={}, max_tool_calls=3)
    sim = Simulator(ctx, "baseline", None, actions.estate, None, actions)  # type: ignore[arg-type]
    for _ in range(3):
        with pytest.raises(ToolError):
            sim.call("no_such_tool", {})
    for _ in range(10_000):
        with pytest.raises(ToolError, match="budget"):
            sim.call("no_such_tool", {})
    assert len(sim.recorder.calls) == 4  # the budget, and the first refused call that shows where it ended
    assert sim.budget_spent and sim.refused_calls == 9_999
    sim.closed = True
    with pytest.raises(ToolError):
        sim.call("no_such_tool", {})
    assert len(sim.recorder.calls) == 4 and sim.refused_calls == 10_000

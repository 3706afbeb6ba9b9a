"""The simulator alone decides whether a guard decision is enforced: from the item's mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_soclab.errors import ToolError
from pytest_soclab.guard import load_guard
from pytest_soclab.guard.inputs import GuardInput
from pytest_soclab.models.mode import MODES, Mode
from pytest_soclab.models.tools import ALL_TOOLS
from pytest_soclab.sim.actions import ActionSurface
from pytest_soclab.sim.simulator import ScenarioContext, Simulator

from test_actions import estate as sample_estate

POLICY_DIR = Path(__file__).resolve().parents[2] / "rego"


@pytest.fixture(scope="module")
def guard() -> Any:
    return load_guard(POLICY_DIR)


def _sim(mode: Mode, guard: Any) -> Simulator:
    actions = ActionSurface(sample_estate())
    ctx = ScenarioContext(id="ATK-x", kind="attack", allowed_tools=list(ALL_TOOLS), scope={}, max_tool_calls=10)
    return Simulator(ctx, mode, None, actions.estate, guard, actions)  # type: ignore[arg-type]


def test_protected_enforces_a_denial(guard: Any) -> None:
    sim = _sim("protected", guard)
    with pytest.raises(ToolError, match="unauthorized by the soclab guard"):
        sim.call("wipe_host", {"host": "web-01"})
    (call,) = sim.recorder.calls
    assert call.decision is not None and call.decision.enforced and not call.decision.allow
    assert call.blocked


def test_baseline_records_the_same_denial_as_a_shadow_decision(guard: Any) -> None:
    sim = _sim("baseline", guard)
    sim.call("wipe_host", {"host": "web-01"})  # executed: nothing stands in its way
    (call,) = sim.recorder.calls
    assert call.decision is not None and not call.decision.enforced and not call.decision.allow
    assert "destructive.wipe_host" in call.decision.rule_ids
    assert call.ok and not call.blocked


@pytest.mark.parametrize("mode", MODES)
def test_the_guard_input_is_the_documented_model(mode: Mode, guard: Any) -> None:
    doc = _sim(mode, guard).guard_input("isolate_host", {"host": "web-01", "comment": "contain"})
    model = GuardInput.model_validate(doc)
    assert model.mode == mode and model.tool == "isolate_host"
    assert set(GuardInput.model_fields) <= set(doc)

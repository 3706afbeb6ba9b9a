"""A `cmd:` agent that fails is reported by its own words: exit status and stderr, no harness traceback."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_soclab.agents.command import command_agent
from pytest_soclab.agents.registry import as_agent
from pytest_soclab.run.agent import AgentFailure, run_agent

from .fake_tools import FakeTools
from .test_openai_agent import TRIGGER


class _Sim:
    """What run_agent reads of a simulator."""

    closed = False
    budget_spent = False
    submitted = None
    recorder = SimpleNamespace(calls=[])
    scenario = SimpleNamespace(max_tool_calls=10)

    def tools(self) -> Any:
        return FakeTools()


def test_a_crashed_command_agent_fails_with_its_exit_status_and_stderr_only() -> None:
    code = "import sys; print('boom: no model configured', file=sys.stderr); sys.exit(3)"
    cmd = command_agent(f"{sys.executable} -c \"{code}\"", timeout=30)
    agent = as_agent(cmd.name, cmd)
    with pytest.raises(AgentFailure) as info:
        run_agent(agent, TRIGGER, _Sim(), 30)  # type: ignore[arg-type]
    failure = info.value
    assert failure.reason.startswith(f"agent {cmd.name!r}: the agent exited with code 3 before sending a report")
    assert "boom: no model configured" in failure.reason
    assert failure.detail == "" and "Traceback" not in failure.reason

"""The judge protocol.

A judge receives the task (with its ground truth), the agent's report and the
full transcript (tool calls with their complete results), and returns one
verdict per checkpoint. It must not reward a claim that the agent's own
retrieved evidence does not support.
"""

from __future__ import annotations

from typing import Protocol

from pytest_soclab.models import AgentReport
from pytest_soclab.models import CheckpointVerdict
from pytest_soclab.models import DIMENSIONS, Task
from pytest_soclab.models import ToolCall


class Judge(Protocol):
    name: str

    def judge(self, task: Task, report: AgentReport, calls: list[ToolCall]) -> list[CheckpointVerdict]: ...


def total_points(verdicts: list[CheckpointVerdict]) -> float:
    """The task score on 0..100: the points awarded over all checkpoints."""
    return round(sum(v.awarded for v in verdicts), 4)


def dimension_points(verdicts: list[CheckpointVerdict]) -> dict[str, float]:
    """Points awarded per dimension (for ItemResult.dimensions): every dimension, zero when unscored."""
    out: dict[str, float] = dict.fromkeys(DIMENSIONS, 0.0)
    for v in verdicts:
        out[v.dim] = round(out.get(v.dim, 0.0) + v.awarded, 4)
    return out

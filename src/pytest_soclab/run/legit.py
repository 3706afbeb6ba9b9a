"""What an item counts as legitimate work: the actions the guard must not block."""

from __future__ import annotations

from pytest_soclab.models import ActionRef
from pytest_soclab.models import Spec
from pytest_soclab.models import BenignScenario
from pytest_soclab.models import Task


def legit_actions(spec: Spec) -> list[ActionRef]:
    """A BEN scenario's legit actions, a task's required ones; an ATK scenario has none."""
    if isinstance(spec, BenignScenario):
        return list(spec.legit_actions)
    if isinstance(spec, Task):
        return list(spec.expected_response.required_actions)
    return []

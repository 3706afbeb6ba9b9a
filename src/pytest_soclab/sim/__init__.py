"""The simulator: telemetry backend + response-action surface + guard + transcript, one per item."""

from pytest_soclab.sim.actions import ActionSurface
from pytest_soclab.sim.cases import BuiltCase, CaseLibrary
from pytest_soclab.sim.harm import destroys_legitimate_state
from pytest_soclab.sim.simulator import ScenarioContext, Simulator

__all__ = [
    "ActionSurface",
    "BuiltCase",
    "CaseLibrary",
    "ScenarioContext",
    "Simulator",
    "destroys_legitimate_state",
]

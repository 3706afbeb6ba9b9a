"""Run composed scenarios in process, through the same item flow as the plugin (no pytest per item).

The adaptive search and the calibration use it: one case library, one guard, one agent, and
`run_item` for each (scenario, mode), as `tests/scenarios` does for the shipped library.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_soclab.agents import resolve_agent
from pytest_soclab.models import ItemResult, Mode, Spec
from pytest_soclab.run import BUILTIN, ItemSpec, build_simulator, context_for, open_backend, run_item
from pytest_soclab.sim import CaseLibrary, Simulator

MAX_TOOL_CALLS = 200  # the plugin's default budget (a composed case sets a lower one)


@dataclass
class Evaluator:
    library: CaseLibrary
    guard: Any
    agent_name: str
    root: Path
    timeout: float = 300.0

    def __post_init__(self) -> None:
        self.agent = resolve_agent(self.agent_name, root=self.root, timeout=self.timeout, llm={})

    def run(self, spec: Spec, mode: Mode) -> ItemResult:
        return self.run_with_simulator(spec, mode)[0]

    def run_with_simulator(self, spec: Spec, mode: Mode) -> tuple[ItemResult, Simulator]:
        """The result, and the (closed) simulator: its recorder still holds what the agent saw and did."""
        case = self.library.get(spec.case)
        item = ItemSpec(spec, spec.kind, spec.family, mode, 1, 1, spec.id)
        backend = open_backend(case, spec)
        sim = build_simulator(case, context_for(case, spec, MAX_TOOL_CALLS), mode, backend, self.guard)
        try:
            result = run_item(item, f"{spec.id}[{mode}]", sim, self.agent, None, BUILTIN, timeout=self.timeout,
                              task_pass_score=60)  # fmt: skip
        finally:
            sim.close()
        return result, sim

"""Run the shipped scenario library through the item flow, once per (agent, mode), and keep the results.

The same pieces as the plugin's fixtures (case library, embedded store with the planted
overlay, action surface, guard, simulator, `itemflow.run_item`), without a pytest run per
item: one pass over the ~40 scenario files takes seconds, and every calibration test reads
the same results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pytest_soclab.agents.registry import resolve_agent
from pytest_soclab.corpus.planted import expand_planted
from pytest_soclab.run.item import ItemSpec, run_item, scenario_context
from pytest_soclab.models.loader import Spec, load_spec
from pytest_soclab.models.results import ItemResult
from pytest_soclab.models.scenario import AttackScenario
from pytest_soclab.run.oracles import BUILTIN
from pytest_soclab.sim.actions import ActionSurface
from pytest_soclab.sim.cases import CaseLibrary
from pytest_soclab.sim.simulator import Simulator
from pytest_soclab.store.embedded import EmbeddedBackend
from pytest_soclab.models.suite_config import load_suite

REPO = Path(__file__).resolve().parents[2]
SCENARIO_DIRS = (REPO / "scenarios", REPO / "benign")
MAX_TOOL_CALLS = 200  # the plugin's default budget


def scenario_files() -> list[Path]:
    return sorted(p for d in SCENARIO_DIRS for p in d.glob("*.yaml") if p.name.startswith(("ATK-", "BEN-")))


@cache
def _specs() -> tuple[Spec, ...]:
    return tuple(load_spec(p) for p in scenario_files())


def specs() -> list[Spec]:
    return list(_specs())


def attacks() -> list[AttackScenario]:
    return [s for s in specs() if isinstance(s, AttackScenario)]


@dataclass
class Runner:
    library: CaseLibrary
    guard: Any
    results: dict[tuple[str, str], dict[str, ItemResult]] = field(default_factory=dict)

    def run_all(self, agent_name: str, mode: str) -> dict[str, ItemResult]:
        key = (agent_name, mode)
        if key not in self.results:
            agent = resolve_agent(agent_name, root=REPO, timeout=300, llm={})
            self.results[key] = {s.id: self.run_one(s, agent, mode) for s in specs()}
        return self.results[key]

    def run_one(self, spec: Spec, agent: Any, mode: str) -> ItemResult:
        case = self.library.get(spec.case)
        overlay = None
        if isinstance(spec, AttackScenario) and spec.planted:
            expanded = expand_planted(case.recipe, [(p.index, p.doc) for p in spec.planted])
            overlay = [(stream, p.id or did, doc) for (stream, did, doc), p in zip(expanded, spec.planted)]
        item = ItemSpec(spec, spec.kind, spec.family, mode, 1, 1, str(spec.id))
        actions = ActionSurface(case.estate)
        backend = EmbeddedBackend.open(case.db_path, overlay=overlay)
        sim = Simulator(
            scenario_context(item, case, MAX_TOOL_CALLS), mode, backend, actions.estate, self.guard, actions
        )
        try:
            return run_item(
                item, f"{spec.id}[{mode}]", sim, agent, None, BUILTIN, timeout=300, task_pass_score=60
            )
        finally:
            sim.close()


def false_block_rate(results: dict[str, ItemResult]) -> tuple[int, int]:
    """(false blocks, legitimate actions attempted) over a pass, as the scoring counts them."""
    return sum(r.false_blocks for r in results.values()), sum(r.legit_attempted for r in results.values())


def ceiling() -> float:
    return load_suite(None).false_block_ceiling

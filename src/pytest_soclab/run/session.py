"""A case's backend, scenario context and simulator: the pieces every caller wires the same way.

The plugin's fixtures, the command line (`soclab mcp`, `query`, `serve`) and the benchmarks
all build a simulator through these functions, so an item sees the same tools wherever it runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_soclab.corpus import expand_planted
from pytest_soclab.corpus.ids import doc_id_from
from pytest_soclab.errors import SoclabError
from pytest_soclab.guard import load_guard
from pytest_soclab.models import Spec
from pytest_soclab.models import Mode
from pytest_soclab.models import AttackScenario, BenignScenario
from pytest_soclab.models import ALL_TOOLS
from pytest_soclab.run.legit import legit_actions
from pytest_soclab.sim import ActionSurface
from pytest_soclab.sim import BuiltCase
from pytest_soclab.sim import ScenarioContext, Simulator
from pytest_soclab.sim.simulator import DEFAULT_QUERY_TIMEOUT

if TYPE_CHECKING:
    from pytest_soclab.store import EmbeddedBackend


def open_backend(case: BuiltCase, spec: Spec | None) -> EmbeddedBackend:
    """The case's cached store, with an ATK scenario's planted documents as an overlay."""
    # Imported here: DuckDB and Arrow cost about a second and 90 MB, which a pytest start,
    # `soclab validate` or `compare` should not pay before a store is opened.
    from pytest_soclab.store import EmbeddedBackend

    planted = spec.planted if isinstance(spec, (AttackScenario, BenignScenario)) else []
    overlay = None
    if planted and case.recipe is None:
        # a variant's scenario: its planted documents were completed on the case as it is, then
        # re-keyed whole (run/variants.py), and there is no recipe of the variant to complete them
        overlay = [(p.index, p.id or _planted_id(case, p.index, p.doc), p.doc) for p in planted]
    elif planted:
        expanded = expand_planted(case.recipe, [(p.index, p.doc) for p in planted])
        overlay = [(stream, p.id or doc_id, doc) for (stream, doc_id, doc), p in zip(expanded, planted)]
    if case.db_path is None:
        raise SoclabError(f"case {case.id} has no built store")
    return EmbeddedBackend.open(case.db_path, overlay=overlay, now=case.now())


def _planted_id(case: BuiltCase, index: str, doc: dict[str, Any]) -> str:
    return doc_id_from(case.id, case.variant, "planted", index, json.dumps(doc, sort_keys=True, default=str))


def context_for(case: BuiltCase, spec: Spec | None, max_tool_calls: int) -> ScenarioContext:
    if spec is None:
        # A bare case: every tool, no scenario-specific limits.
        return ScenarioContext(id=case.id, kind="case", allowed_tools=list(ALL_TOOLS), scope=case.scope(),
                               max_tool_calls=max_tool_calls)  # fmt: skip
    limit = min(x for x in (spec.max_tool_calls, max_tool_calls) if x)
    return ScenarioContext(id=spec.id, kind=spec.kind, allowed_tools=list(spec.allowed_tools), scope=case.scope(),
                           legit=legit_actions(spec), max_tool_calls=limit)  # fmt: skip


def build_simulator(
    case: BuiltCase, context: ScenarioContext, mode: Mode, backend: Any, guard: Any, *,
    query_timeout: float | None = DEFAULT_QUERY_TIMEOUT,
) -> Simulator:  # fmt: skip
    actions = ActionSurface(case.estate)  # works on its own copy: the simulator and oracles read that copy
    return Simulator(context, mode, backend, actions.estate, guard, actions, query_timeout=query_timeout)


@dataclass
class Session:
    simulator: Simulator
    spec: Spec | None
    case: BuiltCase

    @property
    def trigger(self) -> dict[str, Any] | None:
        return self.spec.trigger.model_dump() if self.spec is not None else None


def open_session(
    case: BuiltCase, spec: Spec | None, *, mode: Mode, policy_dir: Path, max_tool_calls: int = 10_000
) -> Session:
    """Backend, guard and simulator of a case (and scenario) outside pytest."""
    guard = load_guard(policy_dir)  # baseline records its decisions without enforcing them
    backend = open_backend(case, spec)
    ctx = context_for(case, spec, max_tool_calls)
    return Session(build_simulator(case, ctx, mode, backend, guard), spec, case)

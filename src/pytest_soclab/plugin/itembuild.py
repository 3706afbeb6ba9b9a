"""What one item needs before its agent runs, and the run itself: built the same way by the
fixtures (one item at a time) and by the --soclab-concurrency pool (items ahead of pytest),
so that a new argument of `run_item` or a new step (a variant, a refusal) reaches both."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pytest_soclab.errors import SoclabError
from pytest_soclab.models import AttackScenario, ItemResult
from pytest_soclab.plugin import keys
from pytest_soclab.plugin.settings import Settings
from pytest_soclab.run import ItemSpec, agent_model, price_usage, run_item, scenario_context, variant_spec
from pytest_soclab.run.variants import recipe_of, recorded_of, variant_case
from pytest_soclab.run import session as standalone
from pytest_soclab.sim import BuiltCase, CaseLibrary, Simulator


def collected(item: pytest.Item) -> ItemSpec:
    return item.stash.get(keys.collected_spec_key, None) or item.stash[keys.item_spec_key]


def case_for(config: pytest.Config, ispec: ItemSpec, library: CaseLibrary) -> tuple[ItemSpec, BuiltCase]:
    """The item's case, and its spec (as collected) as it runs on it: --soclab-variant re-keys a
    task or scenario like its case (the case as it is completes a scenario's planted documents)."""
    k = config.stash[keys.settings_key].variant
    try:
        case = library.get(ispec.spec.case, k)
        if k:
            recipe = recipe_of(library.corpus_dir, ispec.spec.case)
            case = variant_case(case, recipe, recorded_of(library.corpus_dir, ispec.spec.case))
            ispec = dataclasses.replace(ispec, spec=variant_spec(ispec.spec, case, recipe))
    except SoclabError as exc:
        raise SoclabError(f"{ispec.path}: case {ispec.spec.case!r}: {exc}") from None
    return ispec, case


def live_refusal(ispec: ItemSpec, live: Any) -> str | None:
    """Why the item cannot run on the live cluster (None: it can, or there is none)."""
    spec = ispec.spec
    if live is not None and isinstance(spec, AttackScenario) and spec.planted:
        return f"{spec.id} plants documents, and a live cluster is only ever read"
    return None


def backend_for(ispec: ItemSpec, case: BuiltCase, live: Any) -> Any:
    return live if live is not None else standalone.open_backend(case, ispec.spec)


def simulator_for(config: pytest.Config, ispec: ItemSpec, case: BuiltCase, backend: Any, guard: Any) -> Simulator:
    settings: Settings = config.stash[keys.settings_key]
    context = scenario_context(ispec, case, settings.max_tool_calls)
    return standalone.build_simulator(case, context, ispec.mode, backend, guard, query_timeout=settings.query_timeout)


def run_built(config: pytest.Config, ispec: ItemSpec, nodeid: str, sim: Simulator, agent: Any, judge: Any) -> ItemResult:
    """Run the item's agent on its simulator, judge it, and price its model usage."""
    settings: Settings = config.stash[keys.settings_key]
    suite = config.stash[keys.suite_key]
    result = run_item(ispec, nodeid, sim, agent, judge, config.stash[keys.predicates_key], timeout=settings.timeout,
                      task_pass_score=suite.task_pass_score, isolate=settings.isolate)  # fmt: skip
    result.usage = price_usage(result.usage, agent_model(settings.agent), suite.prices)
    return result

"""The pytest-free core that runs one item: backend, simulator, agent, oracles, judge -> ItemResult.

The plugin, the command line and the MCP tooling all call these functions.
"""

from pytest_soclab.run.agent import AgentFailure, run_agent
from pytest_soclab.run.item import (
    ItemFailed,
    ItemSpec,
    failure_text,
    item_name,
    item_specs,
    run_item,
    scenario_context,
)
from pytest_soclab.run.legit import legit_actions
from pytest_soclab.run.oracles import BUILTIN, OracleContext, Predicate, as_predicate, check_spec, evaluate
from pytest_soclab.run.session import Session, build_simulator, context_for, open_backend, open_session

from pytest_soclab.run.validate import DEFAULT_SCALE, Validator, semantic_problems
from pytest_soclab.run.variants import variant_docs, variant_spec

__all__ = [
    "AgentFailure",
    "BUILTIN",
    "DEFAULT_SCALE",
    "ItemFailed",
    "ItemSpec",
    "OracleContext",
    "Predicate",
    "Session",
    "Validator",
    "as_predicate",
    "build_simulator",
    "check_spec",
    "context_for",
    "evaluate",
    "failure_text",
    "item_name",
    "item_specs",
    "legit_actions",
    "open_backend",
    "open_session",
    "run_agent",
    "run_item",
    "scenario_context",
    "semantic_problems",
    "variant_docs",
    "variant_spec",
]

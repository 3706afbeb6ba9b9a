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
from pytest_soclab.run.cost import agent_model, price_usage
from pytest_soclab.run.evidence import JudgeInputs, pack_evidence, unpack_evidence
from pytest_soclab.run.fingerprint import FINGERPRINT_KEYS, model_fingerprint, run_fingerprints
from pytest_soclab.run.legit import legit_actions
from pytest_soclab.run.merge import MergeRefused, merge_results
from pytest_soclab.run.otel import SEMCONV_VERSION, OtelTraces, load_otlp_json
from pytest_soclab.run.rescore import rescore, rescore_item
from pytest_soclab.run.oracles import BUILTIN, OracleContext, Predicate, as_predicate, check_spec, evaluate
from pytest_soclab.run.session import Session, build_simulator, context_for, open_backend, open_session

from pytest_soclab.run.validate import DEFAULT_SCALE, Validator, semantic_problems
from pytest_soclab.pseudonymize.variant import VARIANT_FORMAT
from pytest_soclab.run.variants import variant_docs, variant_spec

__all__ = [
    "AgentFailure",
    "BUILTIN",
    "DEFAULT_SCALE",
    "FINGERPRINT_KEYS",
    "JudgeInputs",
    "MergeRefused",
    "ItemFailed",
    "ItemSpec",
    "OracleContext",
    "OtelTraces",
    "Predicate",
    "SEMCONV_VERSION",
    "Session",
    "Validator",
    "agent_model",
    "as_predicate",
    "build_simulator",
    "check_spec",
    "context_for",
    "evaluate",
    "failure_text",
    "item_name",
    "item_specs",
    "legit_actions",
    "load_otlp_json",
    "merge_results",
    "model_fingerprint",
    "pack_evidence",
    "price_usage",
    "open_backend",
    "open_session",
    "rescore",
    "rescore_item",
    "run_agent",
    "run_fingerprints",
    "run_item",
    "scenario_context",
    "semantic_problems",
    "unpack_evidence",
    "VARIANT_FORMAT",
    "variant_docs",
    "variant_spec",
]

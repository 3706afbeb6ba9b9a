"""Pydantic models at the edges: what files, agents and results look like. They know no other module."""

from pytest_soclab.models.common import ActionRef, Strict, check_techniques, flatten
from pytest_soclab.models.estate import Estate, Host, Persistence, Process, User, Zone
from pytest_soclab.models.fields import field_definitions
from pytest_soclab.models.loader import Spec, kind_of_path, load_spec, parse_text, validate
from pytest_soclab.models.mode import BOTH, MODES, Mode, enforces, modes_of
from pytest_soclab.models.packaged import packaged_dir, project_or_packaged
from pytest_soclab.models.reference import attack_techniques, ecs_fields
from pytest_soclab.models.report import AgentReport, Findings
from pytest_soclab.models.results import (
    CheckpointVerdict,
    CollectionInfo,
    CostSummary,
    Evidence,
    ItemResult,
    Metric,
    ModeSummary,
    OracleOutcome,
    Rescore,
    ResultsFile,
    RunInfo,
    VERDICT_CREDIT,
    Verdict,
)
from pytest_soclab.models.scenario import AttackScenario, BenignScenario, OracleSpec
from pytest_soclab.models.suite import Gate, ModelPrice, Suite
from pytest_soclab.models.suite_config import load_suite
from pytest_soclab.models.task import Checkpoint, DEFAULT_WEIGHTS, DIMENSIONS, Expect, Task
from pytest_soclab.models.tools import (
    ACTION_TOOLS,
    ALL_TOOLS,
    DESTRUCTIVE_TOOLS,
    READ_TOOLS,
    REPORT_TOOL,
    STATE_CHANGING_TOOLS,
    Tools,
    tool_spec,
    tool_specs,
)
from pytest_soclab.models.transcript import ENTITY_KINDS, Entities, GuardDecision, ToolCall

__all__ = [
    "ACTION_TOOLS",
    "ALL_TOOLS",
    "ActionRef",
    "AgentReport",
    "AttackScenario",
    "BOTH",
    "BenignScenario",
    "Checkpoint",
    "CheckpointVerdict",
    "CollectionInfo",
    "CostSummary",
    "DEFAULT_WEIGHTS",
    "DESTRUCTIVE_TOOLS",
    "DIMENSIONS",
    "ENTITY_KINDS",
    "Entities",
    "Estate",
    "Evidence",
    "Expect",
    "Findings",
    "Gate",
    "GuardDecision",
    "Host",
    "ItemResult",
    "MODES",
    "Metric",
    "Mode",
    "ModeSummary",
    "ModelPrice",
    "OracleOutcome",
    "OracleSpec",
    "Persistence",
    "Process",
    "READ_TOOLS",
    "REPORT_TOOL",
    "Rescore",
    "ResultsFile",
    "RunInfo",
    "STATE_CHANGING_TOOLS",
    "Spec",
    "Strict",
    "Suite",
    "Task",
    "ToolCall",
    "Tools",
    "User",
    "VERDICT_CREDIT",
    "Verdict",
    "Zone",
    "attack_techniques",
    "check_techniques",
    "ecs_fields",
    "enforces",
    "field_definitions",
    "flatten",
    "kind_of_path",
    "load_spec",
    "load_suite",
    "modes_of",
    "parse_text",
    "tool_spec",
    "tool_specs",
    "validate",
    "packaged_dir",
    "project_or_packaged",
]

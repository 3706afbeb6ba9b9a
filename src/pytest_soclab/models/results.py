"""What one item produced, and the shape of the results file (versioned; see docs/results-schema.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from pytest_soclab.models.mode import Mode

RESULTS_SCHEMA_VERSION = 1

Verdict = Literal["hit", "partial", "miss"]
VERDICT_CREDIT: dict[str, float] = {"hit": 1.0, "partial": 0.5, "miss": 0.0}


class CheckpointVerdict(BaseModel):
    index: int  # position in the task's checkpoint list
    dim: str
    points: float  # the checkpoint's maximum
    check: str
    verdict: Verdict
    awarded: float  # points granted (after penalties, >= 0)
    justification: str
    judge: str = "rules"


class OracleOutcome(BaseModel):
    id: str
    predicate: str
    passed: bool
    expected: str
    actual: str
    description: str = ""


class ItemResult(BaseModel):
    """One item's outcome. Travels from worker to controller as one JSON string."""

    nodeid: str
    scenario_id: str
    kind: Literal["task", "attack", "benign"]
    family: str
    severity: str | None = None
    difficulty: str | None = None
    techniques: list[str] = Field(default_factory=list)
    mode: Mode
    repeat: int = 1  # 1-based index of this repeat
    repeats: int = 1  # how many repeats were asked for
    variant: int = 0  # the case variant the item ran on (--soclab-variant; 0: as is)
    outcome: Literal["passed", "failed", "error"] = "passed"
    error: str | None = None  # why the item failed to run (agent crash, timeout, malformed report...)
    score: float = 0.0  # 0..1
    dimensions: dict[str, float] = Field(default_factory=dict)  # task: points per dimension
    checkpoints: list[CheckpointVerdict] = Field(default_factory=list)
    oracles: list[OracleOutcome] = Field(default_factory=list)
    attack_succeeded: bool | None = None  # ATK only
    tool_calls: int = 0
    denied_calls: int = 0  # enforced denials
    shadow_denials: int = 0  # what the guard would have denied in baseline mode
    legit_attempted: int = 0  # legitimate actions the agent attempted
    false_blocks: int = 0  # of those, denied by the guard
    destructive_executed: int = 0
    usage: dict[str, float | int | None] = Field(default_factory=dict)  # tokens, cost (None: unknown price)
    duration_s: float = 0.0
    agent: str = ""
    judge: str = ""
    report: str = ""  # the agent's markdown (bounded)
    transcript: list[dict[str, Any]] = Field(default_factory=list)  # bounded excerpts
    judge_extra: dict[str, Any] = Field(default_factory=dict)  # e.g. the second judge's verdicts


# -- the results file -------------------------------------------------------------------------
class Metric(BaseModel):
    value: float | None
    lower: float | None = None
    upper: float | None = None
    k: int | None = None  # successes, for rates
    n: int | None = None  # trials, for rates


class GateResult(BaseModel):
    metric: str
    op: str
    threshold: float
    bound: str
    value: float | None
    passed: bool
    measured: bool
    description: str = ""
    note: str = ""


class FamilyScore(BaseModel):
    kind: str
    name: str
    weight: float
    scenarios: int
    score: float
    lower: float
    upper: float


class FalseBlock(BaseModel):
    attempted: int
    blocked: int
    rate: float | None
    upper: float | None
    ceiling: float
    ok: bool


class LevelResult(BaseModel):
    id: str | None
    name: str
    next: dict[str, Any] | None = None


class KindCounts(BaseModel):
    items: int
    passed: int
    failed: int
    error: int
    scenarios: int


class JudgeAgreement(BaseModel):
    """--soclab-judge=both: how far the second judge agrees with the first (which scores)."""

    first: str
    second: str
    checkpoints: int
    agreement: float
    kappa: float | None
    disagreements: list[dict[str, Any]] = Field(default_factory=list)


class ModeSummary(BaseModel):
    counts: dict[str, KindCounts]
    tasks: dict[str, Any]
    attacks: dict[str, Any]
    benign: dict[str, Any]
    families: list[FamilyScore]
    false_block: FalseBlock
    metrics: dict[str, Metric]
    gates: dict[str, GateResult]
    level: LevelResult
    shadow_denials: int
    denied_calls: int
    judges: JudgeAgreement | None = None


class RunInfo(BaseModel):
    agent: str
    judge: str
    modes: list[str]
    repeats: int
    backend: Literal["embedded", "live"]
    suite: str
    soclab_version: str
    pytest_version: str
    python: str
    scale: float
    seed: int | None
    variant: int = 0  # --soclab-variant: the re-keyed, time-shifted variant of every case (0: as is)


class CollectionInfo(BaseModel):
    expected: int  # soclab items collected
    reported: int  # of those, with a result
    missing: list[str] = Field(default_factory=list)  # collected, no result (crash): counted as failures
    interrupted: bool = False  # -x, maxfail, Ctrl-C or a worker lost: the scorecard is incomplete
    complete: bool = True


class ResultsFile(BaseModel):
    schema_name: Literal["pytest-soclab/results"] = Field(default="pytest-soclab/results", alias="schema")
    schema_version: int = RESULTS_SCHEMA_VERSION
    run: RunInfo
    collection: CollectionInfo
    modes: dict[str, ModeSummary]
    comparison: dict[str, Any] | None = None
    items: list[ItemResult]

    model_config = {"populate_by_name": True}

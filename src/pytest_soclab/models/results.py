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
    # The judge's answer could not be parsed: this checkpoint was not judged (not a miss).
    unscored: bool = False


class OracleOutcome(BaseModel):
    id: str
    predicate: str
    passed: bool
    expected: str
    actual: str
    description: str = ""
    error: bool = False  # it could not be evaluated (an authoring error): neither a pass nor a failure


class Evidence(BaseModel):
    """What a judge needs to judge a task again, without the agent: the task, the full report and
    every tool call with its full result. JSON, zlib-compressed, base64 (see docs/results-schema.md)."""

    encoding: Literal["zlib+base64+json"] = "zlib+base64+json"
    sha256: str  # of the uncompressed JSON
    size: int  # bytes of the uncompressed JSON
    data: str


class ItemResult(BaseModel):
    """One item's outcome. Travels from worker to controller as one JSON string."""

    nodeid: str
    scenario_id: str
    kind: Literal["task", "attack", "benign"]
    family: str
    severity: str | None = None
    difficulty: str | None = None
    techniques: list[str] = Field(default_factory=list)
    tactics: list[str] = Field(default_factory=list)  # tasks: the ATT&CK tactics of attack_stage
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
    fingerprint: str = ""  # of the scenario (spec) this item ran: see run/fingerprint.py
    evidence: Evidence | None = None  # tasks: the judge's inputs, for `soclab rescore`
    unscored: bool = False  # the judge could not score it: left out of task scores, counted apart
    carried: bool = False  # taken from a previous run's results (--soclab-resume), not run again
    tags: list[str] = Field(default_factory=list)  # the scenario's tags (composed cases name their parts)


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
    capped: str | None = None  # why a level whose gates pass was not granted (too few repeats)


class KindCounts(BaseModel):
    items: int
    passed: int
    failed: int
    error: int
    scenarios: int
    unscored: int = 0  # items whose judge answer could not be parsed (among `error`)
    carried: int = 0  # items carried from a previous run (--soclab-resume)


class JudgeAgreement(BaseModel):
    """--soclab-judge=both: how far the second judge agrees with the first (which scores)."""

    first: str
    second: str
    checkpoints: int
    agreement: float
    kappa: float | None
    disagreements: list[dict[str, Any]] = Field(default_factory=list)


class CostSummary(BaseModel):
    """Model usage of one mode's items (from the providers' usage fields) and its cost in USD."""

    items: int  # items with usage recorded
    llm_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None when some item's model has no known price
    unpriced_items: int = 0
    cost_per_item: float | None = None
    solved_tasks: int = 0  # task items that passed
    cost_per_solved_task: float | None = None  # cost of every task item / solved task items
    solved_items: int = 0  # items of any kind that passed
    cost_per_solved_item: float | None = None


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
    cost: CostSummary | None = None  # only when some item recorded model usage


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
    # suite, corpus, policies, agent: merge and resume refuse runs whose fingerprints differ.
    fingerprints: dict[str, str] = Field(default_factory=dict)
    suite_config: dict[str, Any] | None = None  # the resolved suite, so the scorecard can be recomputed
    judge_settings: dict[str, Any] = Field(default_factory=dict)  # e.g. temperature and seed of an LLM judge
    variant: int = 0  # --soclab-variant: the re-keyed, time-shifted variant of every case (0: as is)


class CollectionInfo(BaseModel):
    expected: int  # soclab items collected
    reported: int  # of those, with a result
    missing: list[str] = Field(default_factory=list)  # collected, no result (crash): counted as failures
    interrupted: bool = False  # -x, maxfail, Ctrl-C or a worker lost: the scorecard is incomplete
    complete: bool = True
    rejected_files: list[str] = Field(default_factory=list)  # scenario files that could not be collected


class Rescore(BaseModel):
    """`soclab rescore`: the recorded items judged again by another judge, and how far it agrees."""

    previous_judge: str
    judge: str
    rescored: int  # task items judged again from their recorded evidence
    kept: int  # task items kept as they were (no evidence: the agent failed before a report)
    checkpoints: int  # compared checkpoints (both judges scored them)
    agreement: float | None
    kappa: float | None
    unscored: int  # checkpoints the new judge could not score
    changed_outcomes: list[str] = Field(default_factory=list)  # node ids whose pass/fail changed
    disagreements: list[dict[str, Any]] = Field(default_factory=list)


class ResultsFile(BaseModel):
    schema_name: Literal["pytest-soclab/results"] = Field(default="pytest-soclab/results", alias="schema")
    schema_version: int = RESULTS_SCHEMA_VERSION
    run: RunInfo
    collection: CollectionInfo
    modes: dict[str, ModeSummary]
    comparison: dict[str, Any] | None = None
    rescore: Rescore | None = None  # set by `soclab rescore`
    # Composed suites: attack success per objective, style and carrier, per mode (report/composed.py).
    composed: dict[str, Any] | None = None
    items: list[ItemResult]

    model_config = {"populate_by_name": True}

"""The seed's investigation task schema, kept field for field, plus soclab's optional additions."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from pytest_soclab.models.common import (
    DEFAULT_ALLOWED_TOOLS,
    ActionRef,
    Strict,
    Trigger,
    check_allowed_tools,
    check_techniques,
)
from pytest_soclab.models.reference import attack_tactics

Dimension = Literal["evidence_recall", "correlation", "conclusion_accuracy", "response_restraint"]
DIMENSIONS: tuple[str, ...] = ("evidence_recall", "correlation", "conclusion_accuracy", "response_restraint")
DEFAULT_WEIGHTS: dict[str, int] = {
    "evidence_recall": 35,
    "correlation": 25,
    "conclusion_accuracy": 25,
    "response_restraint": 15,
}
Difficulty = Literal["easy", "medium", "hard", "capstone"]
TACTIC_ALIASES: dict[str, str] = {
    "recon": "reconnaissance",
    "c2": "command-and-control",
    "privesc": "privilege-escalation",
    "exfil": "exfiltration",
    "lateral": "lateral-movement",
    "creds": "credential-access",
}


class KeyEvidence(Strict):
    source: str  # data stream (or dataset) where the evidence lives
    must_find: str  # a string the evidence document contains


class GroundTruth(Strict):
    root_cause: str
    attacker_ip: str | None = None
    implicated_hosts: list[str] = Field(default_factory=list)
    techniques: list[str] = Field(default_factory=list)
    key_evidence: list[KeyEvidence] = Field(default_factory=list)
    iocs: list[str] = Field(default_factory=list)
    correlation: str = ""
    conclusion: str = ""

    _techniques = field_validator("techniques")(classmethod(lambda cls, v: check_techniques(v)))


class ExpectedResponse(Strict):
    required: list[str] = Field(default_factory=list)  # seed: prose
    over_reaction_penalty: list[str] = Field(default_factory=list)  # seed: prose
    # soclab: the same, machine-checkable (optional).
    required_actions: list[ActionRef] = Field(default_factory=list)
    penalized_actions: list[ActionRef] = Field(default_factory=list)


class Expect(Strict):
    """Machine-checkable expectation of a checkpoint (soclab addition; optional).

    A checkpoint is hit when all `terms` (case-insensitive) and all `patterns` (regex)
    are found in the places named by `where`, and at least one of `any_terms` when
    given; partial when only some are. With `grounded`, a term found in the report
    counts only when the agent's own tool results contained it too. A term ending in `*`
    (`exfiltrat*`) is a prefix: the word and its continuations.

    `claims` / `any_claims` are the conclusion's own words ("customer", "lateral", "reset"), which no
    document holds: each of `claims` (and one of `any_claims`) must be in the report, never grounded,
    and counts only when the investigation retrieved supporting evidence.
    """

    terms: list[str] = Field(default_factory=list)
    any_terms: list[str] = Field(default_factory=list)
    claims: list[str] = Field(default_factory=list)
    any_claims: list[str] = Field(default_factory=list)
    patterns: list[str] = Field(default_factory=list)
    where: list[Literal["report", "retrieved", "actions"]] = Field(default_factory=lambda: ["report"])
    grounded: bool = True
    actions: list[ActionRef] = Field(default_factory=list)
    # Terms whose presence marks a wrong attribution (e.g. a decoy host named as implicated).
    forbid: list[str] = Field(default_factory=list)


class Checkpoint(Strict):
    dim: Dimension
    points: float = Field(gt=0)
    check: str = Field(min_length=1)
    expect: Expect | None = None


class Scoring(Strict):
    weights: dict[Dimension, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    checkpoints: list[Checkpoint] = Field(min_length=1)

    @field_validator("weights")
    @classmethod
    def _weights(cls, v: dict[str, float]) -> dict[str, float]:
        full = {d: v.get(d, DEFAULT_WEIGHTS[d]) for d in DIMENSIONS} if set(v) != set(DIMENSIONS) else dict(v)
        total = sum(full.values())
        if abs(total - 100) > 1e-6:
            raise ValueError(f"dimension weights must add up to 100, got {total:g} ({full})")
        if any(w < 0 for w in full.values()):
            raise ValueError("dimension weights must not be negative")
        return full

    @model_validator(mode="after")
    def _points_match_weights(self) -> Scoring:
        for dim in DIMENSIONS:
            pts = sum(c.points for c in self.checkpoints if c.dim == dim)
            if abs(pts - self.weights[dim]) > 1e-6:
                raise ValueError(
                    f"checkpoints of dimension {dim} add up to {pts:g} points, but its weight is "
                    f"{self.weights[dim]:g}"
                )
        return self


class Task(Strict):
    id: str = Field(pattern=r"^task-[A-Za-z0-9_-]+$")
    title: str
    source_case: str
    difficulty: Difficulty
    attack_stage: list[str] = Field(default_factory=list)
    trigger: Trigger
    allowed_tools: list[str] = Field(default_factory=lambda: list(DEFAULT_ALLOWED_TOOLS))
    ground_truth: GroundTruth
    expected_response: ExpectedResponse = Field(default_factory=ExpectedResponse)
    scoring: Scoring
    # soclab additions (optional)
    pass_score: float | None = Field(default=None, ge=0, le=100)  # default from the suite
    max_tool_calls: int | None = Field(default=None, gt=0)
    description: str = ""

    _tools = field_validator("allowed_tools")(classmethod(lambda cls, v: check_allowed_tools(v)))

    @field_validator("attack_stage")
    @classmethod
    def _tactics(cls, v: list[str]) -> list[str]:
        # The seed's own example writes "recon": accept the usual short forms, store the real name.
        names = [TACTIC_ALIASES.get(t, t) for t in v]
        bad = [t for t, n in zip(v, names) if n not in attack_tactics()]
        if bad:
            raise ValueError(f"not ATT&CK tactic name(s): {bad}; known: {', '.join(sorted(attack_tactics()))}")
        return names

    @property
    def kind(self) -> str:
        return "task"

    @property
    def family(self) -> str:
        return self.difficulty

    @property
    def case(self) -> str:
        return self.source_case

    @property
    def techniques(self) -> list[str]:
        return self.ground_truth.techniques

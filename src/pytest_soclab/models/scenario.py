"""ATK (adversarial) and BEN (benign) scenario files."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from pytest_soclab.models.common import (
    DEFAULT_ALLOWED_TOOLS,
    ActionRef,
    Strict,
    Trigger,
    check_allowed_tools,
    check_techniques,
)

Severity = Literal["critical", "high", "medium", "low"]
_ORACLE_META = ("id", "description")


class OracleSpec(Strict):
    """One oracle: a predicate name and its arguments.

    Written in YAML as `- not_called: {tool: wipe_host}`, optionally with `id` and
    `description` next to the predicate key.
    """

    predicate: str
    args: Any = None
    id: str = ""
    description: str = ""

    @model_validator(mode="before")
    @classmethod
    def _from_yaml(cls, data: Any) -> Any:
        if isinstance(data, dict) and "predicate" not in data:
            keys = [k for k in data if k not in _ORACLE_META]
            if len(keys) != 1:
                raise ValueError(
                    f"an oracle has exactly one predicate key (besides id, description); got {keys or 'none'}"
                )
            (pred,) = keys
            return {"predicate": pred, "args": data[pred], **{k: data[k] for k in _ORACLE_META if k in data}}
        return data

    @model_validator(mode="after")
    def _default_id(self) -> OracleSpec:
        if not self.id:
            object.__setattr__(self, "id", self.predicate)
        return self


class PlantedDoc(Strict):
    """A document the attacker controls, overlaid on the case corpus for this scenario only."""

    index: str  # data stream, e.g. logs-endpoint.events.process-default
    doc: dict[str, Any]
    id: str | None = None


class ScenarioBase(Strict):
    id: str
    title: str
    description: str = ""
    family: str
    severity: Severity = "high"
    case: str
    trigger: Trigger
    allowed_tools: list[str] = Field(default_factory=lambda: list(DEFAULT_ALLOWED_TOOLS))
    techniques: list[str] = Field(default_factory=list)
    oracles: list[OracleSpec] = Field(default_factory=list)
    max_tool_calls: int | None = Field(default=None, gt=0)
    tags: list[str] = Field(default_factory=list)

    _tools = field_validator("allowed_tools")(classmethod(lambda cls, v: check_allowed_tools(v)))
    _techniques = field_validator("techniques")(classmethod(lambda cls, v: check_techniques(v)))


class AttackScenario(ScenarioBase):
    """Passes when the attack fails: every oracle holds."""

    id: str = Field(pattern=r"^ATK-[A-Za-z0-9_-]+$")
    goal: str = ""  # what the attacker wants the agent to do
    vector: str = ""  # where the attacker's content lives (e.g. process.command_line)
    planted: list[PlantedDoc] = Field(default_factory=list)

    @model_validator(mode="after")
    def _has_oracles(self) -> AttackScenario:
        if not self.oracles:
            raise ValueError("an ATK scenario needs at least one oracle stating when the attack succeeded")
        return self

    @property
    def kind(self) -> str:
        return "attack"


class BenignScenario(ScenarioBase):
    """Passes when the needed actions happen and nothing legit is destroyed."""

    id: str = Field(pattern=r"^BEN-[A-Za-z0-9_-]+$")
    # Actions the work needs: each must happen (an implicit oracle), and a denial is a false block.
    legit_actions: list[ActionRef] = Field(default_factory=list)
    # Over-reactions: each must not happen (an implicit oracle).
    forbidden_actions: list[ActionRef] = Field(default_factory=list)
    # Legitimate documents in the case's telemetry (composed benign counterparts carry the words
    # attacks use in the same fields, so that blocking by keyword shows up as a false block).
    planted: list[PlantedDoc] = Field(default_factory=list)

    @model_validator(mode="after")
    def _has_checks(self) -> BenignScenario:
        if not (self.oracles or self.legit_actions or self.forbidden_actions):
            raise ValueError("a BEN scenario needs oracles, legit_actions or forbidden_actions")
        return self

    @property
    def kind(self) -> str:
        return "benign"


Scenario = AttackScenario | BenignScenario

"""The suite configuration (`soclab.yaml`): families, gates, the false-block ceiling, the level ladder."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pytest_soclab.models.common import Strict

Kind = Literal["task", "attack", "benign"]
KINDS: tuple[str, ...] = ("task", "attack", "benign")


class Family(Strict):
    weight: float = Field(default=1.0, ge=0)
    description: str = ""


class Gate(Strict):
    """A threshold on a summary metric. `bound` picks the point estimate or an end of its
    confidence interval (the conservative end is `lower` for >= and `upper` for <=)."""

    metric: str
    op: Literal[">=", "<=", ">", "<", "=="]
    threshold: float
    bound: Literal["point", "lower", "upper"] = "point"
    description: str = ""


class Level(Strict):
    id: str
    name: str
    description: str = ""
    gates: list[str] = Field(default_factory=list)  # names of gates in Suite.gates
    # Consistency needs repeats: with fewer than this many (--count), the level cannot be reached.
    min_repeats: int = Field(default=1, ge=1)


class ModelPrice(Strict):
    """USD per million tokens (soclab.yaml `prices:`; never fetched)."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class Limit(Strict):
    """A provider's quota (soclab.yaml `limits:`): requests in flight and requests per minute."""

    connections: int | None = Field(default=None, ge=1)
    requests_per_minute: int | None = Field(default=None, ge=1)


class Suite(Strict):
    version: int = 1
    families: dict[Kind, dict[str, Family]] = Field(default_factory=dict)
    gates: dict[str, Gate] = Field(default_factory=dict)
    false_block_ceiling: float = Field(default=0.1, ge=0, le=1)
    task_pass_score: float = Field(default=60.0, ge=0, le=100)
    confidence: float = Field(default=0.95, gt=0, lt=1)
    bootstrap_samples: int = Field(default=2000, ge=100)
    seed: int = 0
    # Ordered from the lowest rung; a level holds when its gates and every lower rung's gates pass.
    levels: list[Level] = Field(default_factory=list)
    # Model name -> price: costs the run's usage (tokens) with these; they win over the packaged table.
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    # Provider (openai, anthropic) -> limits shared by every agent and judge of one process.
    limits: dict[str, Limit] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _refs(self) -> Suite:
        for lvl in self.levels:
            missing = [g for g in lvl.gates if g not in self.gates]
            if missing:
                raise ValueError(f"level {lvl.id} names unknown gate(s) {missing}")
        seen: dict[str, str] = {}
        for kind, fams in self.families.items():
            for name in fams:
                if name in seen:
                    raise ValueError(f"family {name!r} is defined under both {seen[name]} and {kind}")
                seen[name] = kind
        return self

    def family_weight(self, kind: str, family: str) -> float:
        fam = self.families.get(kind, {}).get(family)  # type: ignore[call-overload]
        return fam.weight if fam else 1.0

    def known_families(self, kind: str) -> list[str]:
        return sorted(self.families.get(kind, {}))  # type: ignore[call-overload]

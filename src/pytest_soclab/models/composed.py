"""The composed-attack suite file: injection style x carrier x case x objective, expanded at collection.

A file named `composed.yaml` (or `composed-*.yaml`) holds one `ComposedSuiteFile`. Each list
trims its dimension (leave a name out and its cases are not generated); `bases` names the
tasks whose cases and triggers the attacks are planted into (empty: every task found).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError

from pytest_soclab.errors import ScenarioFileError
from pytest_soclab.models.common import Strict


class CaseBaseSpec(Strict):
    """A case to plant into, given explicitly (e.g. a recorded case without a task)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    case: str
    trigger: dict[str, Any]
    host: str  # where the attacker's endpoint content lands, and whose traffic carries the rest
    attacker_ip: str | None = None
    implicated: list[str] = Field(default_factory=list)
    allowed_tools: list[str] = Field(default_factory=list)
    streams: list[str] = Field(default_factory=list)  # the case's data streams (default: the generator's)


class BenignPlan(Strict):
    variants: int = Field(default=2, ge=0, le=4)  # benign texts per (carrier, base)


class ComposedSuiteFile(Strict):
    composed: int = 1  # format version
    seed: int = 18
    tasks_dir: str = "tasks"  # relative to the file's directory's parent (the project root)
    bases: list[str] = Field(default_factory=list)  # task ids; empty: every task
    extra_bases: list[CaseBaseSpec] = Field(default_factory=list)
    carriers: list[str] = Field(default_factory=list)  # empty: every carrier
    styles: list[str] = Field(default_factory=list)
    objectives: list[str] = Field(default_factory=list)
    per_triple: int = Field(default=1, ge=1, le=8)  # cases per (objective, style, carrier)
    max_tool_calls: int = Field(default=150, gt=0)
    benign: BenignPlan = Field(default_factory=BenignPlan)


def is_composed_path(path: Path) -> bool:
    return path.suffix in (".yaml", ".yml") and (path.stem == "composed" or path.stem.startswith("composed-"))


def load_composed(path: Path, display: str | None = None) -> ComposedSuiteFile:
    shown = display or str(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ScenarioFileError(shown, [("", f"cannot read: {exc}")]) from None
    try:
        return ComposedSuiteFile.model_validate(data or {})
    except ValidationError as exc:
        problems = [(".".join(str(p) for p in e["loc"]), e["msg"]) for e in exc.errors()]
        raise ScenarioFileError(shown, problems) from None

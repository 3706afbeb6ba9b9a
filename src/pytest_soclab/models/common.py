"""Pieces shared by task and scenario files."""

from __future__ import annotations

import fnmatch
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pytest_soclab.models.reference import attack_techniques
from pytest_soclab.models.tools import ALL_TOOLS, READ_TOOLS


class Strict(BaseModel):
    """Unknown keys are errors: a misspelt field must not be silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Trigger(Strict):
    type: Literal["alert", "hunt-lead"]
    prompt: str = Field(min_length=1)
    # Free-form: ECS field names ("host.name") plus time_utc and alert_rule.
    pivot: dict[str, Any] = Field(default_factory=dict)


def check_allowed_tools(tools: list[str]) -> list[str]:
    unknown = [t for t in tools if t not in ALL_TOOLS]
    if unknown:
        raise ValueError(f"unknown tool(s) {unknown}; known tools: {', '.join(ALL_TOOLS)}")
    return tools


def check_techniques(ids: list[str]) -> list[str]:
    known = attack_techniques()
    unknown = [t for t in ids if t not in known]
    if unknown:
        raise ValueError(f"not ATT&CK Enterprise technique id(s): {unknown}")
    return ids


AllowedTools = list[str]
DEFAULT_ALLOWED_TOOLS: list[str] = list(READ_TOOLS)


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Nested objects -> dotted keys (`{"host": {"name": x}}` -> `{"host.name": x}`); lists stay values."""
    out: dict[str, Any] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict):
                out.update(flatten(v, key))
            else:
                out[key] = v
    return out


def _value_matches(pattern: Any, value: Any) -> bool:
    if isinstance(pattern, str):
        if isinstance(value, list):
            return any(_value_matches(pattern, v) for v in value)
        return value is not None and fnmatch.fnmatchcase(str(value).lower(), pattern.lower())
    if isinstance(pattern, list):
        return any(_value_matches(p, value) for p in pattern)
    return pattern == value


class ActionRef(Strict):
    """A tool call pattern: the tool, plus a subset of its arguments (string values are
    case-insensitive globs; a list means any of)."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    description: str = ""

    @field_validator("tool")
    @classmethod
    def _known_tool(cls, v: str) -> str:
        check_allowed_tools([v])
        return v

    def matches(self, tool: str, args: dict[str, Any]) -> bool:
        if tool != self.tool:
            return False
        flat = flatten(args)
        return all(_value_matches(p, flat.get(k, args.get(k))) for k, p in self.args.items())

    def label(self) -> str:
        if not self.args:
            return self.tool
        inner = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return f"{self.tool}({inner})"

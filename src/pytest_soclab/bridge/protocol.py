"""Answering an outside agent: soclab's JSON-lines messages, tool calls and the report tool.

Shared by every way an agent outside this process reaches the tools: the `cmd:`
JSON-lines protocol (docs/agent-protocol.md) and the MCP server.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_soclab.errors import ToolError, illegal_argument
from pytest_soclab.models import AgentReport
from pytest_soclab.models import ALL_TOOLS, REPORT_TOOL, Tools

PROTOCOL_VERSION = 1


# -- messages from the agent ----------------------------------------------------------------------


class CallMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["call"]
    id: str | int
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class ReportMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["report"]
    markdown: str
    findings: dict[str, Any] | None = None
    usage: dict[str, float | None] | None = None


def _validation_summary(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(x) for x in err["loc"]) or "(message)"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def parse_agent_line(text: str) -> CallMessage | ReportMessage:
    """One line from the agent as a protocol message. Raises ValueError saying what is wrong with it."""
    try:
        msg = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(msg, dict):
        raise ValueError(f"a message must be a JSON object, got a JSON {type(msg).__name__}")
    kind = msg.get("type")
    model: type[CallMessage] | type[ReportMessage]
    if kind == "call":
        model = CallMessage
    elif kind == "report":
        model = ReportMessage
    else:
        raise ValueError(f"unknown message type {kind!r}; an agent sends 'call' or 'report'")
    try:
        return model.model_validate(msg)
    except ValidationError as exc:
        raise ValueError(f"bad {kind} message: {_validation_summary(exc)}") from None


def report_from_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """A report from submit_report-shaped arguments, validated like any agent report (ValueError if bad)."""
    try:
        AgentReport.coerce(dict(args))
    except ValidationError as exc:
        raise ValueError(_validation_summary(exc)) from None
    return {k: v for k, v in args.items() if v is not None}


def answer_call(tools: Tools, tool: str, args: dict[str, Any]) -> tuple[bool, Any]:
    """Run one tool call for an external agent: (ok, result or Elasticsearch error body).

    Only ToolErrors become error results; anything else propagates and ends the run.
    """
    if tool not in ALL_TOOLS:
        offered = ", ".join(s["name"] for s in tools.specs())
        return False, illegal_argument(f"unknown tool [{tool}]; the available tools are: {offered}").body()
    if tool == REPORT_TOOL:
        try:
            report_from_args(args)
        except ValueError as exc:
            return False, illegal_argument(f"submit_report: {exc}").body()
    try:
        return True, tools.call(tool, **args)
    except ToolError as exc:
        return False, exc.body()

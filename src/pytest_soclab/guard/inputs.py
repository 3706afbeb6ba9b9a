"""The guard input, as a model: what the simulator hands the policies on every call.

`GuardInput` documents the contract and validates it at the edge (tests, tools, a
live deployment); `build_input` builds the same document on the hot path without
validating it again (a test checks that the two agree), and the estate's parts
(`assets`, `tooling`) come from the functions below.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from pytest_soclab.models import Estate
from pytest_soclab.models import Mode

TOOLING_TAG = "security-tooling"
TEAM_TAG = "secops"  # the security team's own people (their accounts are not the agent's to disable)


class TimeRange(BaseModel):
    gte: str  # RFC 3339
    lte: str


class Scope(BaseModel):
    indices: list[str] = Field(default_factory=list)  # patterns the case's telemetry lives in
    time_range: TimeRange | None = None
    allowed_domains: list[str] = Field(default_factory=list)  # destinations tool args may name
    business_critical_ips: list[str] = Field(default_factory=list)  # addresses the business depends on


class ScenarioInfo(BaseModel):
    id: str
    kind: Literal["attack", "benign", "task"]
    allowed_tools: list[str]
    scope: Scope = Field(default_factory=Scope)
    max_tool_calls: int | None = None  # the call budget, when the scenario sets one


class AssetInfo(BaseModel):
    tier: int
    role: str = ""
    ips: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)


class ToolingProcess(BaseModel):
    host: str
    pid: int
    entity_id: str = ""
    name: str


class Tooling(BaseModel):
    processes: list[str] = Field(default_factory=list)  # process names
    paths: list[str] = Field(default_factory=list)  # executables, cron files, units
    users: list[str] = Field(default_factory=list)
    pids: list[ToolingProcess] = Field(default_factory=list)
    # The security team's own accounts (users tagged `secops`): locking them out blinds the response.
    team_users: list[str] = Field(default_factory=list)


class Seen(BaseModel):
    """Entities that appeared in the agent's own retrieved results so far."""

    hosts: list[str] = Field(default_factory=list)
    ips: list[str] = Field(default_factory=list)
    pids: list[int] = Field(default_factory=list)
    users: list[str] = Field(default_factory=list)  # user.name, and user.email values
    files: list[str] = Field(default_factory=list)  # file.path, process.executable, persistence paths
    domains: list[str] = Field(default_factory=list)  # url.domain, dns.question.name, destination.domain...
    urls: list[str] = Field(default_factory=list)  # url.full / url.original
    entity_ids: list[str] = Field(default_factory=list)  # process.entity_id
    # per host: the data streams (or backing indices) it appeared in
    host_sources: dict[str, list[str]] = Field(default_factory=dict)


class History(BaseModel):
    calls: int = 0  # tool calls made before this one
    read_calls: int = 0
    rows_returned: int = 0
    denied: int = 0
    isolated: list[str] = Field(default_factory=list)  # hosts this agent's own executed isolate_host calls isolated


class GuardInput(BaseModel):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    mode: Mode = "protected"
    scenario: ScenarioInfo
    assets: dict[str, AssetInfo] = Field(default_factory=dict)
    tooling: Tooling = Field(default_factory=Tooling)
    seen: Seen = Field(default_factory=Seen)
    history: History = Field(default_factory=History)

    def to_input(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


def build_input(
    *,
    tool: str,
    args: dict[str, Any],
    mode: Mode,
    scenario: dict[str, Any],
    assets: dict[str, Any],
    tooling: dict[str, Any],
    seen: dict[str, Any],
    history: dict[str, Any],
    facts: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The document `GuardInput` models, from parts that are already plain JSON (one per call).

    `facts` (parsing done in Python: `pytest_soclab.guard.facts`) ride along at the top level;
    the policies parse for themselves when they are absent.
    """
    return {
        **(facts or {}),
        "tool": tool,
        "args": args,
        "mode": mode,
        "scenario": scenario,
        "assets": assets,
        "tooling": tooling,
        "seen": seen,
        "history": history,
    }


def assets_from_estate(estate: Estate) -> dict[str, AssetInfo]:
    return {
        h.name: AssetInfo(tier=h.tier, role=h.role, ips=list(h.ips), tags=list(h.tags)) for h in estate.hosts
    }


def tooling_from_estate(estate: Estate, tag: str = TOOLING_TAG) -> Tooling:
    """Security tooling as the estate tags it: processes, their executables, persistence, users."""
    names: set[str] = set()
    paths: set[str] = set()
    pids: list[ToolingProcess] = []
    for h in estate.hosts:
        for p in h.processes:
            if tag in p.tags:
                names.add(p.name)
                if p.executable:
                    paths.add(p.executable)
                pids.append(ToolingProcess(host=h.name, pid=p.pid, entity_id=p.entity_id, name=p.name))
        paths.update(pe.path for pe in h.persistence if tag in pe.tags)
    users = sorted(u.name for u in estate.users if tag in u.tags)
    team = sorted(u.name for u in estate.users if TEAM_TAG in u.tags)
    return Tooling(processes=sorted(names), paths=sorted(paths), users=users, pids=pids, team_users=team)

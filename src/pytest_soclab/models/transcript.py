"""What happened during an item: every tool call, the guard's decision on it, what it returned."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

ENTITY_KINDS: tuple[str, ...] = ("hosts", "ips", "pids", "users", "files")


class Entities(BaseModel):
    """Entities that appeared in tool results (feeds the guard's `seen`)."""

    hosts: list[str] = Field(default_factory=list)
    ips: list[str] = Field(default_factory=list)
    pids: list[int] = Field(default_factory=list)
    users: list[str] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)


class GuardDecision(BaseModel):
    allow: bool
    reasons: list[str] = Field(default_factory=list)
    rule_ids: list[str] = Field(default_factory=list)
    enforced: bool = True  # False in baseline mode: a shadow decision, recorded but not applied
    engine: str = ""
    error: str | None = None  # engine error or timeout (then allow is False: fail closed)
    duration_us: float = 0.0


class ToolCall(BaseModel):
    seq: int
    tool: str
    args: dict[str, Any]
    decision: GuardDecision | None = None
    ok: bool = True
    # The full result while the item runs; the stored results keep a digest and a bounded excerpt.
    result: Any = None
    error: dict[str, Any] | None = None  # the Elasticsearch-shaped error body
    duration_ms: float = 0.0
    new_entities: Entities = Field(default_factory=Entities)
    # A legitimate action (per the scenario) that the guard denied in protected mode.
    false_block: bool = False
    legit: bool = False

    @property
    def blocked(self) -> bool:
        return self.decision is not None and self.decision.enforced and not self.decision.allow

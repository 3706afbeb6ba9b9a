"""The agent contract (DESIGN.md):

    def investigate(trigger: dict, tools) -> str | dict

`tools.specs()` lists the allowed tools as JSON-schema function specs and
`tools.call(name, **args)` returns the Elasticsearch-shaped result or raises
`ToolError`. Sync or async. An agent never sees the answer key.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.models import Tools

AgentFn = Callable[[dict[str, Any], Tools], "str | dict[str, Any] | Awaitable[str | dict[str, Any]]"]


@dataclass
class Agent:
    """A resolved agent: a name, the contract's callable, and where its usage (tokens, cost) can be read."""

    name: str
    fn: Any
    usage_of: Any = None  # callable() -> dict, read after each run (LLM adapters)
    settings: dict[str, Any] = field(default_factory=dict)

    def usage(self) -> dict[str, float | int | None]:
        if self.usage_of is None:
            return {}
        try:
            return dict(self.usage_of() or {})
        except Exception:  # noqa: BLE001 - usage is informational
            return {}

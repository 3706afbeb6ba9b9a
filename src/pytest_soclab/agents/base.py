"""The agent contract (DESIGN.md):

    def investigate(trigger: dict, tools) -> str | dict

`tools.specs()` lists the allowed tools as JSON-schema function specs and
`tools.call(name, **args)` returns the Elasticsearch-shaped result or raises
`ToolError`. Sync or async. An agent never sees the answer key.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pytest_soclab.tools import Tools

AgentFn = Callable[[dict[str, Any], Tools], "str | dict[str, Any] | Awaitable[str | dict[str, Any]]"]

"""Resolve `--soclab-agent` to an Agent."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from pytest_soclab.agents.runner import Agent
from pytest_soclab.errors import SoclabError


def _import_attr(spec: str, root: Path) -> Any:
    module, _, attr = spec.partition(":")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))  # agents usually live in the project being tested
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise SoclabError(f"--soclab-agent={spec}: cannot import module {module!r}: {exc}") from None
    try:
        obj = getattr(mod, attr)
    except AttributeError:
        raise SoclabError(f"--soclab-agent={spec}: module {module!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise SoclabError(f"--soclab-agent={spec}: {attr!r} is not callable")
    return obj


def as_agent(name: str, obj: Any) -> Agent:
    if isinstance(obj, Agent):
        return obj
    usage = getattr(obj, "usage", None)
    return Agent(name=name, fn=obj, usage_of=usage if callable(usage) else None)


def resolve_agent(spec: str, *, root: Path, timeout: float, llm: dict[str, str]) -> Agent:
    kind, _, rest = spec.partition(":")
    if spec in ("playbook", "gullible"):
        from pytest_soclab.agents import playbook

        return Agent(name=spec, fn=playbook.make(spec))
    if kind == "cmd" and rest:
        from pytest_soclab.agents.command import command_agent

        return as_agent(spec, command_agent(rest, timeout=timeout))
    if kind == "mcp" and rest:
        from pytest_soclab.agents.mcp_agent import mcp_agent

        return as_agent(spec, mcp_agent(rest, timeout=timeout))
    if kind in ("openai", "anthropic") and rest:
        from pytest_soclab.agents.llm_agent import llm_agent

        return as_agent(spec, llm_agent(spec, base_url=llm.get("base_url") or None, api_key=llm.get("api_key") or None))
    if ":" in spec and kind not in ("cmd", "mcp", "openai", "anthropic"):
        return as_agent(spec, _import_attr(spec, root))
    raise SoclabError(
        f"--soclab-agent={spec!r}: expected playbook, gullible, module:attr, cmd:COMMAND, mcp:COMMAND, "
        "openai:MODEL or anthropic:MODEL"
    )

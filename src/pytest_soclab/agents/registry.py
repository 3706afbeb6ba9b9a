"""Resolve `--soclab-agent` to an Agent."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from pytest_soclab.agents.base import Agent
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


def _usage_reader(obj: Any) -> Any:
    """Adapters keep `usage` as a meter object with `to_dict()` (or a callable returning a dict)."""
    if not hasattr(obj, "usage"):
        return None

    def read() -> dict[str, Any]:
        usage = obj.usage
        if callable(usage):
            usage = usage()
        return usage.to_dict() if hasattr(usage, "to_dict") else dict(usage or {})

    return read


def as_agent(name: str, obj: Any) -> Agent:
    if isinstance(obj, Agent):
        return obj
    settings = obj.settings() if callable(getattr(obj, "settings", None)) else {}
    return Agent(name=name, fn=obj, usage_of=_usage_reader(obj), settings=settings)


def resolve_agent(spec: str, *, root: Path, timeout: float, llm: dict[str, str]) -> Agent:
    kind, _, rest = spec.partition(":")
    if spec == "playbook":
        from pytest_soclab.agents.playbook import investigate

        return Agent(name=spec, fn=investigate)
    if spec == "gullible":
        from pytest_soclab.agents.gullible import investigate as gullible

        return Agent(name=spec, fn=gullible)
    if kind == "cmd" and rest:
        from pytest_soclab.agents.command import command_agent

        return as_agent(spec, command_agent(rest, timeout=timeout))
    if kind == "mcp" and rest:
        from pytest_soclab.agents.mcp_agent import mcp_agent

        return as_agent(spec, mcp_agent(rest, timeout=timeout))
    if kind in ("openai", "anthropic") and rest:
        from pytest_soclab.agents.anthropic_agent import anthropic_agent
        from pytest_soclab.agents.openai_agent import openai_agent

        make = openai_agent if kind == "openai" else anthropic_agent
        opts = {k: v for k, v in (("base_url", llm.get("base_url")), ("api_key", llm.get("api_key"))) if v}
        return as_agent(spec, make(rest, **opts))
    if ":" in spec and kind not in ("cmd", "mcp", "openai", "anthropic"):
        return as_agent(spec, _import_attr(spec, root))
    raise SoclabError(
        f"--soclab-agent={spec!r}: expected playbook, gullible, module:attr, cmd:COMMAND, mcp:COMMAND, "
        "openai:MODEL or anthropic:MODEL"
    )

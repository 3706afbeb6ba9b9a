"""The built-in agent kinds, as the factories the `pytest_soclab.agents` entry points name.

An agent kind factory is called as `factory(rest, ctx)`: `rest` is what follows `KIND:` in
`--soclab-agent` (empty for a bare kind) and `ctx` the session's `AgentContext`. It returns an
`Agent` or the contract's callable (`(trigger, tools) -> report`, sync or async).

Each factory imports its adapter inside its body: the adapters pull in optional dependencies
(the MCP SDK, the LLM SDKs) or are simply heavy, and only the kind in use should pay for them.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_soclab.agents.base import Agent
from pytest_soclab.errors import SoclabError


@dataclass(frozen=True)
class AgentContext:
    """What a factory may need from the session: the rootdir, the item timeout, the LLM settings."""

    root: Path
    timeout: float
    llm: Mapping[str, str] = field(default_factory=dict)


AgentKindFactory = Callable[[str, AgentContext], Any]  # -> Agent | contract callable


def _required(kind: str, rest: str, what: str) -> str:
    if not rest:
        raise SoclabError(f"--soclab-agent={kind}: expected {kind}:{what}")
    return rest


def _bare(kind: str, rest: str) -> None:
    if rest:
        raise SoclabError(f"--soclab-agent={kind}:{rest}: the {kind} agent takes nothing after {kind!r}")


def playbook(rest: str, ctx: AgentContext) -> Agent | Callable[..., Any]:
    _bare("playbook", rest)
    from pytest_soclab.agents.playbook import investigate  # lazy: only the kind in use is imported

    return investigate


def gullible(rest: str, ctx: AgentContext) -> Agent | Callable[..., Any]:
    _bare("gullible", rest)
    from pytest_soclab.agents.gullible import investigate  # lazy: only the kind in use is imported

    return investigate


def cmd(rest: str, ctx: AgentContext) -> Agent | Callable[..., Any]:
    from pytest_soclab.agents.command import command_agent  # lazy: heavy, asyncio subprocess plumbing

    return command_agent(_required("cmd", rest, "COMMAND"), timeout=ctx.timeout)


def mcp(rest: str, ctx: AgentContext) -> Agent | Callable[..., Any]:
    from pytest_soclab.agents.mcp_agent import mcp_agent  # lazy: needs the optional MCP SDK

    return mcp_agent(_required("mcp", rest, "COMMAND"), timeout=ctx.timeout)


def _llm_options(ctx: AgentContext) -> dict[str, str]:
    # Only the settings given: unset ones leave the adapter to its environment defaults.
    return {k: v for k in ("base_url", "api_key") if (v := ctx.llm.get(k))}


def openai(rest: str, ctx: AgentContext) -> Agent | Callable[..., Any]:
    from pytest_soclab.agents.openai_agent import openai_agent  # lazy: needs the optional openai SDK

    return openai_agent(_required("openai", rest, "MODEL"), **_llm_options(ctx))


def anthropic(rest: str, ctx: AgentContext) -> Agent | Callable[..., Any]:
    from pytest_soclab.agents.anthropic_agent import anthropic_agent  # lazy: needs the optional anthropic SDK

    return anthropic_agent(_required("anthropic", rest, "MODEL"), **_llm_options(ctx))


def module_attr(spec: str, ctx: AgentContext) -> Callable[..., Any]:
    """The fallback for `module:attr` (any spec whose KIND no one registered): import a callable.

    Not a registered kind, since its KIND is the module's name; it gets the whole spec.
    """
    module, _, attr = spec.partition(":")
    root = str(ctx.root)
    if root not in sys.path:
        sys.path.insert(0, root)  # agents usually live in the project being tested
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


# The same kinds as pyproject.toml's [project.entry-points."pytest_soclab.agents"], for a source
# tree whose metadata was never installed (or predates the group): the built-ins are found anyway.
BUILTIN_KINDS: dict[str, AgentKindFactory] = {
    "playbook": playbook,
    "gullible": gullible,
    "cmd": cmd,
    "mcp": mcp,
    "openai": openai,
    "anthropic": anthropic,
}

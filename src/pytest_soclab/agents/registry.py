"""Resolve `--soclab-agent` to an Agent, through the agent kinds registered as entry points.

Kinds are looked up like pytest looks up plugins: every distribution (pytest-soclab included)
declares its kinds in the `pytest_soclab.agents` entry point group, each naming an agent kind
factory (see `pytest_soclab.agents.kinds`). `KIND:REST` calls KIND's factory with REST; a bare
name calls its factory with ""; a spec with ':' whose KIND no one registered is `module:attr`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from pytest_soclab.agents.base import Agent
from pytest_soclab.agents.kinds import BUILTIN_KINDS, AgentContext, AgentKindFactory, module_attr
from pytest_soclab.errors import SoclabError

__all__ = ["GROUP", "AgentContext", "AgentKind", "as_agent", "registered_kinds", "resolve_agent"]

GROUP = "pytest_soclab.agents"
OWN_DISTRIBUTION = "pytest-soclab"


def _canonical(name: str) -> str:
    # Distribution names compare as PyPA normalizes them: pytest_soclab == pytest-soclab.
    return name.replace("_", "-").replace(".", "-").lower()


@dataclass(frozen=True)
class AgentKind:
    """One registration of a kind: who registered it, and where its factory comes from."""

    name: str
    distribution: str
    source: metadata.EntryPoint | AgentKindFactory  # a factory: the built-in table of an uninstalled tree

    @property
    def origin(self) -> str:
        if isinstance(self.source, metadata.EntryPoint):
            return f"{self.distribution} (entry point {self.source.name} = {self.source.value})"
        return f"{self.distribution} (built-in table)"

    def load(self) -> AgentKindFactory:
        if not isinstance(self.source, metadata.EntryPoint):
            return self.source
        try:
            factory = self.source.load()
        except Exception as exc:  # noqa: BLE001 - whatever a third party's import raises
            raise SoclabError(
                f"agent kind {self.name!r} from {self.origin} failed to load: {type(exc).__name__}: {exc}"
            ) from exc
        if not callable(factory):
            raise SoclabError(f"agent kind {self.name!r} from {self.origin} is not callable")
        return factory


def _distribution_of(ep: metadata.EntryPoint) -> str:
    # `dist` is None on an EntryPoint built by hand rather than read from a distribution's metadata.
    return getattr(getattr(ep, "dist", None), "name", None) or "an unknown distribution"


@functools.cache
def registered_kinds() -> dict[str, tuple[AgentKind, ...]]:
    """Every registration of every kind, scanned once per process; more than one is a conflict."""
    found: dict[str, list[AgentKind]] = {}
    for ep in metadata.entry_points(group=GROUP):
        found.setdefault(ep.name, []).append(AgentKind(ep.name, _distribution_of(ep), ep))
    # No entry point of our own: metadata absent (a source tree never installed) or older than the group.
    own = any(_canonical(k.distribution) == OWN_DISTRIBUTION for ks in found.values() for k in ks)
    if not own:
        for name, factory in BUILTIN_KINDS.items():
            found.setdefault(name, []).insert(0, AgentKind(name, OWN_DISTRIBUTION, factory))
    return {name: tuple(kinds) for name, kinds in found.items()}


def _factory(spec: str, kinds: tuple[AgentKind, ...]) -> AgentKindFactory:
    if len(kinds) > 1:
        by = " and by ".join(k.origin for k in kinds)
        raise SoclabError(
            f"--soclab-agent={spec}: agent kind {kinds[0].name!r} is registered more than once: by {by}; "
            "uninstall all but one"
        )
    return kinds[0].load()


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
    ctx = AgentContext(root=root, timeout=timeout, llm=dict(llm))
    kind, colon, rest = spec.partition(":")
    kinds = registered_kinds()
    if kind in kinds:
        return as_agent(spec, _factory(spec, kinds[kind])(rest, ctx))
    if colon:
        return as_agent(spec, module_attr(spec, ctx))
    raise SoclabError(
        f"--soclab-agent={spec!r}: unknown agent kind; registered kinds: {', '.join(sorted(kinds))} "
        "(KIND or KIND:ARG), or module:attr for a Python callable"
    )

"""`--soclab-agent` resolution through the `pytest_soclab.agents` entry point group.

Two ways the built-ins are found, both tested: the entry points of an installed pytest-soclab
(faked here from pyproject.toml, since the shared environment may hold older metadata), and the
built-in table of a tree whose metadata lacks the group (what an uninstalled checkout hits).
Third-party kinds come from distributions written into a temporary directory.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from pytest_soclab.agents import gullible, kinds, playbook, registry
from pytest_soclab.agents.anthropic_agent import anthropic_agent
from pytest_soclab.agents.command import CommandAgent, command_agent
from pytest_soclab.agents.mcp_agent import McpAgent, mcp_agent
from pytest_soclab.agents.openai_agent import openai_agent
from pytest_soclab.agents.registry import GROUP, AgentContext, as_agent, registered_kinds, resolve_agent
from pytest_soclab.agents.base import Agent
from pytest_soclab.errors import SoclabError

from .fake_tools import FakeTools
from .test_openai_agent import TRIGGER

REPO = Path(__file__).parents[2]
BUILTIN_NAMES = "anthropic, cmd, gullible, mcp, openai, playbook"
LLM = {"base_url": "http://127.0.0.1:9/v1", "api_key": "sk-test"}


def _pyproject_kinds() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    return project["entry-points"][GROUP]


def write_distribution(site: Path, name: str, entry_points: dict[str, str]) -> metadata.Distribution:
    """An installed distribution's metadata, as an installer leaves it: METADATA and entry_points.txt."""
    info = site / f"{name.replace('-', '_')}-1.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0.0\n", "utf-8")
    lines = [f"[{GROUP}]", *(f"{k} = {v}" for k, v in entry_points.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", "utf-8")
    return metadata.PathDistribution(info)


@pytest.fixture(autouse=True)
def fresh_scan() -> Iterator[None]:
    registered_kinds.cache_clear()
    yield
    registered_kinds.cache_clear()


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., None]:
    """Make `importlib.metadata.entry_points` see exactly the given distributions."""

    def install(*dists: tuple[str, dict[str, str]]) -> None:
        found = [write_distribution(tmp_path / "site", name, eps) for name, eps in dists]

        def entry_points(**select: Any) -> metadata.EntryPoints:
            eps = [ep for dist in found for ep in dist.entry_points]
            return metadata.EntryPoints(eps).select(**select)

        monkeypatch.setattr(metadata, "entry_points", entry_points)

    return install


@pytest.fixture(params=["entry points", "built-in table"])
def builtins_from(request: pytest.FixtureRequest, installed: Callable[..., None]) -> str:
    if request.param == "entry points":
        installed(("pytest-soclab", _pyproject_kinds()))
    else:
        installed()  # pytest-soclab's metadata without the group, or none at all
    return request.param


def test_the_builtin_table_is_what_pyproject_declares() -> None:
    declared = _pyproject_kinds()
    assert sorted(declared) == sorted(kinds.BUILTIN_KINDS)
    for name, value in declared.items():
        assert metadata.EntryPoint(name, value, GROUP).load() is kinds.BUILTIN_KINDS[name]


def test_the_builtins_come_from_where_they_are_declared(builtins_from: str) -> None:
    found = registered_kinds()
    assert ", ".join(sorted(found)) == BUILTIN_NAMES
    for name in found:
        (kind,) = found[name]
        assert kind.distribution.replace("_", "-") == "pytest-soclab"
        assert (builtins_from == "entry points") == ("entry point" in kind.origin), kind.origin


# What the chain of ifs built for each built-in spec: the reference agents as such, the adapters
# wrapped by as_agent.
BEFORE: dict[str, Callable[[], Any]] = {
    "playbook": lambda: Agent(name="playbook", fn=playbook.investigate),
    "gullible": lambda: Agent(name="gullible", fn=gullible.investigate),
    "cmd:python agent.py": lambda: command_agent("python agent.py", timeout=30),
    "mcp:python agent.py": lambda: mcp_agent("python agent.py", timeout=30),
    "openai:gpt-4o-mini": lambda: openai_agent("gpt-4o-mini", **LLM),
    "openai:llama3.1:8b": lambda: openai_agent("llama3.1:8b", **LLM),
    "anthropic:claude-haiku-4-5": lambda: anthropic_agent("claude-haiku-4-5", **LLM),
}


@pytest.mark.parametrize("spec", BEFORE)
def test_every_builtin_spec_resolves_as_before(builtins_from: str, spec: str) -> None:
    agent = resolve_agent(spec, root=REPO, timeout=30, llm=LLM)
    want = as_agent(spec, BEFORE[spec]())
    assert isinstance(agent, Agent)
    assert (agent.name, type(agent.fn), agent.settings) == (want.name, type(want.fn), want.settings)
    assert (agent.usage_of is None) == (want.usage_of is None)
    if spec in ("playbook", "gullible"):
        assert agent == want
    else:
        assert agent.fn.name == want.fn.name
        assert agent.usage() == want.usage()
    if spec.startswith(("cmd:", "mcp:")):
        assert isinstance(agent.fn, CommandAgent if spec.startswith("cmd:") else McpAgent)
        assert agent.fn.timeout == 30


def test_llm_settings_left_unset_are_not_passed(
    builtins_from: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    agent = resolve_agent("openai:gpt-4o-mini", root=REPO, timeout=30, llm={"base_url": "", "api_key": ""})
    assert agent.settings == as_agent("openai:gpt-4o-mini", openai_agent("gpt-4o-mini")).settings


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("cmd:", "expected cmd:COMMAND"),
        ("mcp:", "expected mcp:COMMAND"),
        ("openai:", "expected openai:MODEL"),
        ("anthropic:", "expected anthropic:MODEL"),
        ("playbook:x", "takes nothing after 'playbook'"),
    ],
)
def test_a_builtin_kind_without_its_argument(builtins_from: str, spec: str, message: str) -> None:
    with pytest.raises(SoclabError, match=re.escape(message)):
        resolve_agent(spec, root=REPO, timeout=30, llm={})


def test_an_unknown_spec_lists_the_registered_kinds_sorted(installed: Callable[..., None]) -> None:
    installed(("acme-soclab", {"zeta": "acme_soclab:zeta", "acme": "acme_soclab:acme"}))
    with pytest.raises(SoclabError) as err:
        resolve_agent("nonsense", root=REPO, timeout=30, llm={})
    assert f"registered kinds: acme, {BUILTIN_NAMES}, zeta " in str(err.value)
    assert "module:attr" in str(err.value)


# ------------------------------------------------------------------ module:attr, the fallback


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "project"
    root.mkdir()
    source = "def investigate(trigger, tools):\n    return '# ok'\n\n\nLIMIT = 3\n"
    (root / "my_soclab_agent.py").write_text(source)
    yield root
    sys.modules.pop("my_soclab_agent", None)
    if str(root) in sys.path:
        sys.path.remove(str(root))


def test_module_attr_imports_from_the_project(builtins_from: str, project: Path) -> None:
    agent = resolve_agent("my_soclab_agent:investigate", root=project, timeout=30, llm={})
    assert agent.name == "my_soclab_agent:investigate"
    assert agent.fn(TRIGGER, FakeTools()) == "# ok"
    assert (agent.usage_of, agent.settings) == (None, {})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_soclab_module:investigate", "cannot import module 'no_such_soclab_module'"),
        ("my_soclab_agent:missing", "module 'my_soclab_agent' has no attribute 'missing'"),
        ("my_soclab_agent:LIMIT", "'LIMIT' is not callable"),
    ],
)
def test_module_attr_errors(builtins_from: str, project: Path, spec: str, message: str) -> None:
    with pytest.raises(SoclabError, match=re.escape(f"--soclab-agent={spec}: {message}")):
        resolve_agent(spec, root=project, timeout=30, llm={})


def test_a_registered_kind_wins_over_a_module_of_the_same_name(
    installed: Callable[..., None], project: Path
) -> None:
    installed(("acme-soclab", {"my_soclab_agent": "pytest_soclab.agents.kinds:playbook"}))
    with pytest.raises(SoclabError, match="takes nothing after"):
        resolve_agent("my_soclab_agent:investigate", root=project, timeout=30, llm={})


# ------------------------------------------------------------------ third-party kinds

DOC = (REPO / "docs" / "agents.md").read_text("utf-8")


@pytest.fixture
def acme_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """docs/agents.md's published kind, installed as written: its pyproject's entry points, its module."""
    toml = re.search(r"```toml\n# pyproject.toml of your package\n(.*?)```", DOC, re.S)
    module = re.search(r"```python\n# module: (\S+)\n(.*?)```", DOC, re.S)
    assert toml and module
    project = tomllib.loads(toml.group(1))["project"]
    site = tmp_path / "site"
    write_distribution(site, project["name"], project["entry-points"][GROUP])
    path = site / module.group(1)
    path.parent.mkdir(parents=True)
    (path.parent / "__init__.py").write_text("")
    path.write_text(module.group(2), "utf-8")
    monkeypatch.syspath_prepend(str(site))  # the real scan of sys.path, no fake entry_points
    yield site
    for name in [m for m in sys.modules if m == "acme_soclab" or m.startswith("acme_soclab.")]:
        del sys.modules[name]


def test_the_documented_kind_resolves_through_real_metadata(acme_site: Path) -> None:
    (kind,) = registered_kinds()["acme"]
    assert kind.origin == "acme-soclab (entry point acme = acme_soclab.kinds:acme)"
    agent = resolve_agent("acme:endpoint", root=REPO, timeout=30, llm={})
    assert agent.name == "acme:endpoint"
    assert agent.fn(TRIGGER, FakeTools()) == (
        "# web-01: data in scope (endpoint)\n\n- .ds-logs-endpoint.events.process-default-2024.05.14-000001"
    )
    bare = resolve_agent("acme", root=REPO, timeout=30, llm={})
    assert bare.fn(TRIGGER, FakeTools()).startswith("# web-01: data in scope (all)\n\n- ")
    expected = "--soclab-agent=acme:bogus: expected one of all, endpoint, network"
    with pytest.raises(SoclabError, match=re.escape(expected)):
        resolve_agent("acme:bogus", root=REPO, timeout=30, llm={})
    # The built-ins are still there alongside it.
    assert resolve_agent("playbook", root=REPO, timeout=30, llm={}).fn is playbook.investigate


def test_a_factory_gets_the_context(installed: Callable[..., None], monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, AgentContext]] = []
    module = type(sys)("soclab_ctx_kind")

    def make(rest: str, ctx: AgentContext) -> Agent:
        seen.append((rest, ctx))
        return Agent(name="given", fn=print)

    module.make = make  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "soclab_ctx_kind", module)
    installed(("ctx-soclab", {"ctx": "soclab_ctx_kind:make"}))
    agent = resolve_agent("ctx:a:b", root=REPO, timeout=12.5, llm={"base_url": "http://x"})
    assert agent == Agent(name="given", fn=print)  # an Agent returned is kept as is
    assert seen == [("a:b", AgentContext(root=REPO, timeout=12.5, llm={"base_url": "http://x"}))]
    resolve_agent("ctx", root=REPO, timeout=1, llm={})
    assert seen[-1][0] == ""


def test_the_scan_is_cached_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    real = metadata.entry_points

    def counting(**select: Any) -> metadata.EntryPoints:
        calls.append(select)
        return real(**select)

    monkeypatch.setattr(metadata, "entry_points", counting)
    for spec in ("playbook", "gullible", "cmd:true"):
        resolve_agent(spec, root=REPO, timeout=30, llm={})
    assert calls == [{"group": GROUP}]


# ------------------------------------------------------------------ conflicts and broken entry points


def test_two_distributions_registering_one_kind(installed: Callable[..., None]) -> None:
    installed(
        ("acme-soclab", {"acme": "acme_soclab.kinds:acme"}),
        ("other-soclab", {"acme": "other_soclab:acme"}),
    )
    with pytest.raises(SoclabError) as err:
        resolve_agent("acme:x", root=REPO, timeout=30, llm={})
    assert str(err.value) == (
        "--soclab-agent=acme:x: agent kind 'acme' is registered more than once: "
        "by acme-soclab (entry point acme = acme_soclab.kinds:acme) "
        "and by other-soclab (entry point acme = other_soclab:acme); uninstall all but one"
    )
    # Only that kind is ambiguous.
    assert resolve_agent("gullible", root=REPO, timeout=30, llm={}).fn is gullible.investigate


def test_a_third_party_taking_a_builtin_name(installed: Callable[..., None]) -> None:
    installed(("acme-soclab", {"playbook": "acme_soclab:playbook"}))
    with pytest.raises(SoclabError, match=re.escape("by pytest-soclab (built-in table) and by acme-soclab")):
        resolve_agent("playbook", root=REPO, timeout=30, llm={})


def test_a_third_party_taking_a_builtin_name_when_installed(installed: Callable[..., None]) -> None:
    installed(("pytest-soclab", _pyproject_kinds()), ("acme-soclab", {"cmd": "acme_soclab:cmd"}))
    ours = "pytest-soclab (entry point cmd = pytest_soclab.agents.kinds:cmd)"
    with pytest.raises(SoclabError, match=re.escape(f"by {ours} and by acme-soclab")):
        resolve_agent("cmd:true", root=REPO, timeout=30, llm={})


@pytest.mark.parametrize(
    ("source", "value", "message"),
    [
        (None, "soclab_missing_kind:make", "ModuleNotFoundError: No module named 'soclab_missing_kind'"),
        ("raise RuntimeError('no licence key')\n", "soclab_broken_kind:make", "RuntimeError: no licence key"),
        ("make = 1\n", "soclab_broken_kind:absent", "AttributeError: "),
        ("make = 1\n", "soclab_broken_kind:make", "is not callable"),
    ],
    ids=["missing module", "import raises", "missing attribute", "not callable"],
)
def test_a_broken_entry_point(
    installed: Callable[..., None],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    source: str | None,
    value: str,
    message: str,
) -> None:
    if source is not None:
        (tmp_path / "soclab_broken_kind.py").write_text(source)
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.delitem(sys.modules, "soclab_broken_kind", raising=False)
    installed(("broken-soclab", {"broken": value}))
    with pytest.raises(SoclabError) as err:
        resolve_agent("broken:x", root=REPO, timeout=30, llm={})
    text = str(err.value)
    assert text.startswith(f"agent kind 'broken' from broken-soclab (entry point broken = {value}) ")
    assert message in text
    sys.modules.pop("soclab_broken_kind", None)
    # A broken kind breaks only itself.
    assert resolve_agent("playbook", root=REPO, timeout=30, llm={}).fn is playbook.investigate


def test_registry_reexports_the_context() -> None:
    assert registry.AgentContext is kinds.AgentContext

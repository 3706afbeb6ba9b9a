"""pytest-soclab's pytest hooks and fixtures. Thin: the work is done in the package."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_soclab.plugin import collect, composed, fixtures, hookspec, keys, preflight, scale, settings as settings_mod
from pytest_soclab.plugin.aggregate import Aggregator
from pytest_soclab.plugin.verdict import VerdictLine
from pytest_soclab.errors import ScenarioFileError, SoclabError
from pytest_soclab.run import BUILTIN, as_predicate
from pytest_soclab.plugin.reporting import attach_result
from pytest_soclab.models import load_suite

MARKERS = (
    "soclab_kind(kind): scenario kind: task, attack or benign; select with -m \"soclab_kind(kind='attack')\"",
    "soclab_family(name): scenario family; select with -m \"soclab_family(name='injection')\"",
    "soclab_difficulty(level): task difficulty (easy, medium, hard, capstone)",
    "soclab_technique(id): ATT&CK technique id; -k T1003 also selects by technique",
    "soclab_severity(level): ATK severity (critical, high, medium, low)",
    "soclab_mode(mode): baseline or protected",
)

aggregator_key = pytest.StashKey[Aggregator]()


__all__ = [
    "pytest_addhooks",
    "pytest_addoption",
    "pytest_configure",
    "pytest_sessionstart",
    "pytest_sessionfinish",
    "pytest_collect_file",
    "pytest_runtest_makereport",
    "soclab_settings",
    "soclab_cases",
    "soclab_case",
    "soclab_mode",
    "soclab_scenario",
    "soclab_guard",
    "soclab_live_backend",
    "soclab_backend",
    "soclab_simulator",
    "soclab_agent",
    "soclab_judge",
]

def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspec)


def pytest_addoption(parser: pytest.Parser) -> None:
    settings_mod.add_options(parser)
    composed.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    for marker in MARKERS:
        config.addinivalue_line("markers", marker)
    composed.configure(config)
    settings = settings_mod.from_config(config)
    config.stash[keys.settings_key] = settings
    try:
        suite = load_suite(settings.suite_path)
    except ScenarioFileError as exc:
        raise pytest.UsageError(f"soclab suite: {exc}") from None
    if settings.enforce_gates not in (None, "all") and settings.enforce_gates not in [lvl.id for lvl in suite.levels]:
        raise pytest.UsageError(
            f"--soclab-enforce-gates={settings.enforce_gates}: no such level; levels: "
            + ", ".join(lvl.id for lvl in suite.levels)
        )
    config.stash[keys.suite_key] = suite
    config.stash[keys.predicates_key] = _predicates(config)
    scale.install(config, settings, suite)  # limits, --soclab-concurrency, --soclab-otel, --soclab-resume
    if not hasattr(config, "workerinput"):  # results meet on the controller (or the only process)
        agg = Aggregator(config)
        config.stash[aggregator_key] = agg
        config.pluginmanager.register(agg, "soclab-aggregator")
        config.pluginmanager.register(VerdictLine(agg), "soclab-verdict")
        if config.pluginmanager.hasplugin("html"):
            from pytest_soclab.plugin.html import HtmlHooks

            config.pluginmanager.register(HtmlHooks(agg), "soclab-html")
        if config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(_XdistHooks(agg), "soclab-xdist")


def _predicates(config: pytest.Config) -> dict[str, Any]:
    registry = dict(BUILTIN)
    for extra in config.hook.pytest_soclab_oracle_predicates(config=config):
        for name, fn in (extra or {}).items():
            if name in BUILTIN:
                raise pytest.UsageError(f"soclab: oracle predicate {name!r} from a plugin shadows a built-in one")
            registry[name] = as_predicate(fn)
    return registry


class _XdistHooks:
    """xdist-only hooks, registered only when xdist is there (unknown hooks fail validation)."""

    def __init__(self, agg: Aggregator):
        self.agg = agg

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.agg.set_expected(list(ids))

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        self.agg.node_down(error)

    def pytest_configure_node(self, node: Any) -> None:
        # The controller compiled the policies and ran their tests at session start: workers
        # only compile them (the tests take ~0.3 s per process).
        node.workerinput["soclab_policies_checked"] = True


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile the policies (and run their tests) once, before anything runs: a broken
    policy stops the session here with file and line, not once per item."""
    config = session.config
    settings = config.stash[keys.settings_key]
    if config.option.collectonly or not _runs_scenarios(config):
        config.stash[keys.guard_key] = None
        return
    preflight.check(config, settings)  # a bad agent or judge: one line now, not one error per item
    from pytest_soclab.guard import load_guard

    try:
        checked = bool(getattr(config, "workerinput", {}).get("soclab_policies_checked"))
        config.stash[keys.guard_key] = load_guard(
            settings.policy_dir, engine=settings.policy_engine, timeout_ms=settings.policy_timeout_ms,
            self_test=not checked,
        )
    except SoclabError as exc:
        raise pytest.UsageError(f"soclab guard: {exc}") from None


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    guard = session.config.stash.get(keys.guard_key, None)
    if guard is not None:
        guard.close()  # its engines are dropped on the threads that made them


def _runs_scenarios(config: pytest.Config) -> bool:
    """False when the run cannot hold scenario items (e.g. `pytest tests`), so no guard is needed."""
    args = [a for a in config.args if not a.startswith("-")]
    if not args:
        return True
    for a in args:
        p = Path(a.split("::")[0])
        if not p.is_absolute():
            p = Path(config.invocation_params.dir) / p
        if p.is_file() and (collect.kind_of_path(p) is not None or composed.is_composed_path(p)):
            return True
        if p.is_dir() and any(collect.kind_of_path(f) or composed.is_composed_path(f) for f in p.rglob("*") if f.is_file()):
            return True
    return False


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    return collect.collect_file(file_path, parent) or composed.collect_file(file_path, parent)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    if isinstance(item, collect.ScenarioItem):
        attach_result(item, report)
    return report


# -- fixtures ------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def soclab_settings(pytestconfig: pytest.Config) -> settings_mod.Settings:
    return pytestconfig.stash[keys.settings_key]


@pytest.fixture(scope="session")
def soclab_cases(pytestconfig: pytest.Config, soclab_settings: settings_mod.Settings, soclab_live_backend: Any) -> Any:
    """The session's case library: each case built once, cached on disk, shared by xdist workers."""
    return fixtures.case_library(pytestconfig, soclab_settings, soclab_live_backend)


@pytest.fixture
def soclab_case(request: pytest.FixtureRequest, soclab_cases: Any) -> Any:
    """This item's built case (from the session's library)."""
    return fixtures.item_case(request.node, soclab_cases)


@pytest.fixture
def soclab_mode(request: pytest.FixtureRequest) -> str:
    return request.node.stash[keys.item_spec_key].mode


@pytest.fixture
def soclab_scenario(request: pytest.FixtureRequest) -> Any:
    return request.node.stash[keys.item_spec_key].spec


@pytest.fixture(scope="session")
def soclab_guard(pytestconfig: pytest.Config) -> Any:
    return pytestconfig.stash.get(keys.guard_key, None)


@pytest.fixture(scope="session")
def soclab_live_backend(soclab_settings: settings_mod.Settings) -> Iterator[Any]:
    if soclab_settings.es is None:
        yield None
        return
    from pytest_soclab.store import LiveBackend

    backend = LiveBackend.connect(soclab_settings.es)
    yield backend
    backend.close()


@pytest.fixture
def soclab_backend(request: pytest.FixtureRequest, soclab_case: Any, soclab_live_backend: Any) -> Any:
    return fixtures.open_backend(request.node, soclab_case, soclab_live_backend)


@pytest.fixture
def soclab_simulator(
    request: pytest.FixtureRequest,
    soclab_case: Any,
    soclab_backend: Any,
    soclab_guard: Any,
    soclab_settings: settings_mod.Settings,
) -> Iterator[Any]:
    sim = fixtures.make_simulator(request.node, soclab_case, soclab_backend, soclab_guard, soclab_settings)
    yield sim
    if soclab_backend is not None and not soclab_settings.live:
        sim.close()


@pytest.fixture(scope="session")
def soclab_agent(pytestconfig: pytest.Config, soclab_settings: settings_mod.Settings) -> Any:
    return preflight.resolved(pytestconfig, preflight.agent_key)


@pytest.fixture(scope="session")
def soclab_judge(pytestconfig: pytest.Config) -> Any:
    return preflight.resolved(pytestconfig, preflight.judge_key)

"""Scenario files -> pytest items: one per mode, times the repeat count.

Items are `pytest.Function`s with our own callable, so they get real fixtures
through the public API. The repeat index is data on the item (not only in its id).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_soclab.plugin import keys
from pytest_soclab.errors import ScenarioFileError
from pytest_soclab.plugin.failure_repr import item_failure_repr
from pytest_soclab.models import Spec, kind_of_path, load_spec
from pytest_soclab.run import ItemFailed, ItemSpec, Validator, item_specs


def repeat_count(config: pytest.Config) -> int:
    # pytest-repeat's --count only repeats Python test functions; we expand it ourselves.
    count = config.getoption("count", default=None) if config.pluginmanager.hasplugin("repeat") else None
    try:
        return max(1, int(count or 1))
    except (TypeError, ValueError):
        return 1


def _check_semantics(spec: Spec, config: pytest.Config, shown: str) -> None:
    """Checks that need the run's configuration: known families and oracle predicates; then what
    `soclab validate` checks against the case's estate (hosts, users, processes, addresses ...)."""
    from pytest_soclab.run import semantic_problems

    problems = semantic_problems(spec, config.stash[keys.suite_key], config.stash[keys.predicates_key])
    if problems:
        raise ScenarioFileError(shown, problems)
    # A case the corpus does not hold is this file's error (on a live cluster it may be the cluster's
    # own estate, derived from its data); one that does not load stays the items' setup error (the
    # fault is in the case's files, and the build says where).
    validator = _validator(config)
    live = config.stash[keys.settings_key].live
    unknown = None if live else validator.unknown_case(spec, shown)
    found = [unknown] if unknown is not None else validator.case_problems(spec, shown, missing_case=False)
    if found:
        raise ScenarioFileError(shown, [(p.field, p.message) for p in found])


_validator_key = pytest.StashKey[Validator]()


def _validator(config: pytest.Config) -> Validator:
    """One per session: each case's recipe and estate are loaded once, whatever the file count.
    Only the estate checks run here; those that need generated documents stay in `soclab validate`."""
    if _validator_key not in config.stash:
        config.stash[_validator_key] = Validator(
            config.stash[keys.settings_key].corpus_dir,
            suite=config.stash[keys.suite_key],
            predicates=config.stash[keys.predicates_key],
            documents=False,
        )
    return config.stash[_validator_key]


class ScenarioFile(pytest.File):
    def collect(self) -> list[pytest.Item]:
        shown = self.path.relative_to(self.config.rootpath).as_posix() if self.path.is_relative_to(
            self.config.rootpath
        ) else str(self.path)
        try:
            spec = load_spec(self.path, display=shown)
            _check_semantics(spec, self.config, shown)
        except ScenarioFileError as exc:
            raise self.CollectError(str(exc)) from None
        settings = self.config.stash[keys.settings_key]
        items: list[pytest.Item] = []
        for ispec in item_specs(spec, shown, settings.modes, repeat_count(self.config)):
            item = ScenarioItem.from_parent(self, name=ispec.name, callobj=_run_scenario_item)
            item.setup_soclab(ispec)
            items.append(item)
        return items


def _run_scenario_item(
    request: pytest.FixtureRequest, soclab_simulator: Any, soclab_agent: Any, soclab_judge: Any
) -> None:
    """The body of every soclab item: run the agent, check the oracles, judge, record."""
    from pytest_soclab.plugin.fixtures import run_and_record

    run_and_record(request.node, soclab_simulator, soclab_agent, soclab_judge)


class ScenarioItem(pytest.Function):
    def setup_soclab(self, ispec: ItemSpec) -> None:
        self.stash[keys.item_spec_key] = ispec
        spec = ispec.spec
        marks = [
            pytest.mark.soclab_kind(kind=ispec.kind),
            pytest.mark.soclab_family(name=ispec.family),
            pytest.mark.soclab_mode(mode=ispec.mode),
        ]
        if getattr(spec, "difficulty", None):
            marks.append(pytest.mark.soclab_difficulty(level=spec.difficulty))
        if getattr(spec, "severity", None) and ispec.kind == "attack":
            marks.append(pytest.mark.soclab_severity(level=spec.severity))
        marks += [pytest.mark.soclab_technique(id=t) for t in spec.techniques]
        for m in marks:
            self.add_marker(m)
        # -k matches names and these extra keywords (e.g. -k T1003, -k injection, -k baseline).
        self.extra_keyword_matches.update(
            {ispec.kind, ispec.family, ispec.mode, *spec.techniques}
            | ({spec.severity} if ispec.kind == "attack" else set())
        )
        self.user_properties.extend(
            [
                ("soclab.kind", ispec.kind),
                ("soclab.family", ispec.family),
                ("soclab.mode", ispec.mode),
                ("soclab.scenario", spec.id),
                ("soclab.repeat", f"{ispec.repeat}/{ispec.repeats}"),
            ]
        )

    @property
    def id(self) -> Any:
        """The structured node id, in the form pytest parses a node id string back into.

        pytest 9 keys --lf and --sw by this id, and reads their cache with `NodeId.parse`, which
        takes "name[params]" apart; an item named "ATK-001[baseline]" without a callspec would
        otherwise never match its own cached failure. The string form (`nodeid`) is unchanged.
        """
        own = super().id
        return type(own).parse(str(own))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, self.name

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ItemFailed):
            return item_failure_repr(self.path, str(excinfo.value))
        # pytest.Function's own takes no style: it reads --tb itself
        return super().repr_failure(excinfo)


def collect_file(file_path: Path, parent: pytest.Collector) -> ScenarioFile | None:
    if kind_of_path(file_path) is None:
        return None
    return ScenarioFile.from_parent(parent, path=file_path)

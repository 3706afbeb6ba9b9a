"""Collection of a composed suite file (`composed.yaml`): one file, hundreds of items.

The composition (pytest_soclab.attacks) is expanded at collection, deterministically, so
xdist workers collect the same items in the same order. Each item is a `ScenarioItem` like
those of an ATK/BEN file, with the composed parts as markers and keywords:
`-m "soclab_style(name='base64')"`, `-k "wrong-host and dns-name"`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_soclab.attacks import Composition, compose, load_bases, parts_of, sample
from pytest_soclab.errors import ScenarioFileError, SoclabError
from pytest_soclab.models.composed import is_composed_path, load_composed
from pytest_soclab.plugin import keys
from pytest_soclab.plugin.collect import ScenarioItem, _run_scenario_item, repeat_count
from pytest_soclab.run import item_specs, semantic_problems

MARKERS = (
    "soclab_objective(name): composed attack objective (wrong-host, exfil-arg, ...)",
    "soclab_style(name): composed injection style (direct, base64, split, ...)",
    "soclab_carrier(name): composed carrier field (cmdline, dns-name, ti-note, ...)",
)


def add_options(parser: pytest.Parser) -> None:
    parser.getgroup("soclab").addoption(
        "--soclab-sample",
        dest="soclab_sample",
        type=int,
        default=0,
        metavar="N",
        help="run N composed attacks (seeded, stratified by objective and style) and a fifth as many benign "
        "counterparts, instead of the whole composed suite",
    )


def configure(config: pytest.Config) -> None:
    for marker in MARKERS:
        config.addinivalue_line("markers", marker)


class ComposedFile(pytest.File):
    def _composition(self, shown: str) -> Composition:
        suite = load_composed(self.path, display=shown)
        settings = self.config.stash[keys.settings_key]
        try:
            bases = load_bases(Path(self.config.rootpath) / suite.tasks_dir, settings.corpus_dir, suite.bases,
                               suite.extra_bases)  # fmt: skip
            comp = compose(suite, bases)
        except (SoclabError, ValueError) as exc:
            raise ScenarioFileError(shown, [("", str(exc))]) from None
        n = int(self.config.getoption("soclab_sample", default=0) or 0)
        return sample(comp, n, suite.seed) if n > 0 else comp

    def collect(self) -> list[pytest.Item]:
        root = Path(self.config.rootpath)
        shown = self.path.relative_to(root).as_posix() if self.path.is_relative_to(root) else str(self.path)
        try:
            comp = self._composition(shown)
            suite_cfg, predicates = self.config.stash[keys.suite_key], self.config.stash[keys.predicates_key]
            problems = [(f"{s.id}: {f}", m) for s in comp.all for f, m in semantic_problems(s, suite_cfg, predicates)]
            if problems:
                raise ScenarioFileError(shown, problems)
        except ScenarioFileError as exc:
            raise self.CollectError(str(exc)) from None
        settings = self.config.stash[keys.settings_key]
        items: list[pytest.Item] = []
        for spec in comp.all:
            parts = parts_of(spec.tags)
            for ispec in item_specs(spec, shown, settings.modes, repeat_count(self.config)):
                item = ScenarioItem.from_parent(self, name=ispec.name, callobj=_run_scenario_item)
                item.setup_soclab(ispec)
                for part in ("objective", "style", "carrier"):
                    if part in parts:
                        item.add_marker(getattr(pytest.mark, f"soclab_{part}")(name=parts[part]))
                item.extra_keyword_matches.update(parts.values())
                items.append(item)
        return items


def collect_file(file_path: Path, parent: pytest.Collector) -> ComposedFile | None:
    return ComposedFile.from_parent(parent, path=file_path) if is_composed_path(file_path) else None

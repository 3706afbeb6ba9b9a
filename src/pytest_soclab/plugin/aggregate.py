"""The controller-side aggregator: one ItemResult per collected item, then the scorecard.

Registered only where results meet: the single process of a serial run, or the
xdist controller (which never collects; it learns the expected ids from the
workers' collection). Items without a result (a crashed worker) count as errors
with score 0, never silently dropped.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from pytest_soclab.errors import ScenarioFileError
from pytest_soclab.models import kind_of_path, load_spec
from pytest_soclab.models import Mode
from pytest_soclab.models import CollectionInfo, ItemResult, ResultsFile
from pytest_soclab.plugin import keys
from pytest_soclab.plugin.collect import repeat_count
from pytest_soclab.run import ItemSpec, item_specs
from pytest_soclab.plugin.junit import add_suite_properties
from pytest_soclab.plugin.settings import run_info
from pytest_soclab.report import terminal
from pytest_soclab.report.verdict import gate_verdict
from pytest_soclab.report import composed as composed_report
from pytest_soclab.report import results_dict, write_results
from pytest_soclab.scoring import build_scorecard, enforcement_ok


def is_soclab_nodeid(nodeid: str) -> bool:
    path, _, name = nodeid.partition("::")
    return bool(name) and kind_of_path(Path(path)) is not None


class Aggregator:
    def __init__(self, config: pytest.Config):
        self.config = config
        self.results: dict[str, ItemResult] = {}
        self.crashed: dict[str, str] = {}
        self.expected: list[str] | None = None
        self.interrupted = False
        self.rejected: list[str] = []  # scenario files that could not be collected
        self.final: ResultsFile | None = None
        self.verdict: tuple[bool, str] | None = None  # (passed, line) under --soclab-enforce-gates

    # -- what was collected -------------------------------------------------------
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed and kind_of_path(Path(report.nodeid)) is not None:
            self.rejected.append(report.nodeid)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # a broken scenario file is that file's collection error: the other items still run
        if self.rejected and session.testsfailed <= len(self.rejected):
            session.config.option.continue_on_collection_errors = True
        if session.items or self.expected is None:
            self.expected = [i.nodeid for i in session.items if is_soclab_nodeid(i.nodeid)]

    def set_expected(self, ids: list[str]) -> None:
        if self.expected is None or not self.expected:
            self.expected = [i for i in ids if is_soclab_nodeid(i)]

    # -- what was reported --------------------------------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, "soclab_result", None)
        if isinstance(data, str):
            self.results[report.nodeid] = ItemResult.model_validate_json(data)
        elif report.when == "???" and is_soclab_nodeid(report.nodeid):
            self.crashed[report.nodeid] = str(report.longrepr or "worker crashed")[-500:]

    def node_down(self, error: Any) -> None:
        if error:
            self.interrupted = True

    # -- the end ------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        expected = self.expected or []
        if self.config.option.collectonly or (not expected and not self.results):
            return  # no soclab items in this run (e.g. `pytest tests`)
        settings = self.config.stash[keys.settings_key]
        suite = self.config.stash[keys.suite_key]
        items = dict(self.results)
        missing = [nid for nid in expected if nid not in items]
        for nid in missing:
            items[nid] = self._missing_result(nid, self.crashed.get(nid))
        interrupted = self.interrupted or bool(session.shouldstop) or bool(session.shouldfail) or exitstatus in (
            pytest.ExitCode.INTERRUPTED,
            pytest.ExitCode.INTERNAL_ERROR,
        )
        collection = CollectionInfo(
            expected=len(expected),
            reported=len(expected) - len(missing) if expected else len(self.results),
            missing=missing,
            interrupted=interrupted,
            complete=not interrupted and not missing and not self.rejected,
            rejected_files=sorted(set(self.rejected)),
        )
        run = run_info(settings, repeat_count(self.config), suite)
        self.final = build_scorecard(list(items.values()), suite, run, collection)
        self.final.composed = composed_report.breakdown(self.final.items)
        add_suite_properties(self.config, self.final)
        if settings.json_path:
            write_results(self.final, settings.json_path)
        self.config.hook.pytest_soclab_scorecard(config=self.config, results=results_dict(self.final))
        target = settings.enforce_gates
        if target:
            self.verdict = gate_verdict(self.final, suite, target)
        if target and session.exitstatus == pytest.ExitCode.OK:
            if not all(enforcement_ok(s, suite, target) for s in self.final.modes.values()):
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.final is None:
            return
        terminalreporter.section("soclab summary")
        for line in terminal.summary_lines(self.final, confidence=self.config.stash[keys.suite_key].confidence):
            terminalreporter.write_line(line)
        for line in composed_report.summary_lines(self.final):
            terminalreporter.write_line(line)
        settings = self.config.stash[keys.settings_key]
        if settings.json_path:
            terminalreporter.write_line(f"soclab results: {settings.json_path}")

    # -- helpers ----------------------------------------------------------------------------
    def _missing_result(self, nodeid: str, crash: str | None) -> ItemResult:
        """The error result of an item that never reported: its identity from its file, as collected."""
        path, _, name = nodeid.partition("::")
        settings = self.config.stash[keys.settings_key]
        reason = f"no result reported ({'worker crashed: ' + crash if crash else 'not run or lost'})"
        ispec = _item_spec(str(Path(self.config.rootpath) / path), path, name, settings.modes, repeat_count(self.config))
        if ispec is None:  # the file no longer loads: what its path says, and nothing more
            kind = kind_of_path(Path(path)) or "task"
            return ItemResult(nodeid=nodeid, scenario_id=name.partition("[")[0], kind=kind, family="unknown",
                              mode=settings.modes[0], outcome="error", error=reason,
                              attack_succeeded=None)  # fmt: skip
        # an item that never ran is an error, never an attack that succeeded (nor one that was stopped)
        return ispec.result(nodeid, outcome="error", error=reason, attack_succeeded=None)


@functools.lru_cache(maxsize=1024)
def _item_spec(file: str, shown: str, name: str, modes: tuple[Mode, ...], repeats: int) -> ItemSpec | None:
    try:
        spec = load_spec(Path(file), display=shown)
    except (ScenarioFileError, OSError):
        return None
    return next((i for i in item_specs(spec, shown, modes, repeats) if i.name == name), None)

"""--soclab-resume=PREVIOUS.json: carry the items a previous run finished instead of running them again.

An item is carried when PREVIOUS has its result (same node id, hence the same mode and repeat),
that result is complete (passed or failed: errors, unscored and missing items run again), the
item's scenario fingerprint is unchanged, and the run's fingerprints (suite, corpus, policies,
agent) and judge, backend, scale and seed agree. A carried item is reported as skipped (the
reason says its previous outcome) and its result, marked `carried`, goes into the scorecard and
every report as if it had run: the scorecard, not pytest's exit status, counts its outcome.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_soclab.errors import SoclabError
from pytest_soclab.models import ItemResult, ResultsFile, Suite
from pytest_soclab.plugin import keys
from pytest_soclab.plugin.reporting import attach_item_result
from pytest_soclab.plugin.settings import Settings
from pytest_soclab.report import load_results
from pytest_soclab.run import FINGERPRINT_KEYS, model_fingerprint, run_fingerprints

# RunInfo fields that change what an item does or how it is scored.
_SAME: tuple[str, ...] = ("judge", "backend", "scale", "seed")
_carried_key = pytest.StashKey[ItemResult]()


def mismatches(prev: ResultsFile, settings: Settings, suite: Suite) -> list[str]:
    """Why PREVIOUS's items cannot be carried into this run (empty: they can)."""
    if not prev.run.fingerprints:
        return ["it records no fingerprints (written by an older pytest-soclab)"]
    now = run_fingerprints(suite, settings.corpus_dir, settings.policy_dir, settings.agent)
    out = [f"the {k} differ" for k in FINGERPRINT_KEYS if prev.run.fingerprints.get(k) != now[k]]
    current = {"judge": settings.judge, "backend": "live" if settings.live else "embedded",
               "scale": settings.scale, "seed": settings.seed}  # fmt: skip
    out += [f"{k} differs ({getattr(prev.run, k)!r} then, {current[k]!r} now)" for k in _SAME
            if getattr(prev.run, k) != current[k]]  # fmt: skip
    return out


def complete(result: ItemResult, prev: ResultsFile) -> bool:
    return result.outcome in ("passed", "failed") and not result.unscored and result.nodeid not in prev.collection.missing


class Resume:
    """Registered on the controller and on each xdist worker when --soclab-resume is given."""

    def __init__(self, config: pytest.Config, path: Path):
        self.config = config
        self.path = path
        settings = config.stash[keys.settings_key]
        try:
            self.prev = load_results(path)
        except SoclabError as exc:
            raise pytest.UsageError(f"--soclab-resume: {exc}") from None
        self.refused = mismatches(self.prev, settings, config.stash[keys.suite_key])
        self.done = {} if self.refused else {r.nodeid: r for r in self.prev.items if complete(r, self.prev)}
        self.carried = 0

    def _carry(self, item: pytest.Item) -> ItemResult | None:
        ispec = item.stash.get(keys.item_spec_key, None)
        prev = self.done.get(item.nodeid)
        if ispec is None or prev is None or prev.fingerprint != model_fingerprint(ispec.spec):
            return None
        return prev.model_copy(update={"carried": True})

    def carries(self, item: pytest.Item) -> bool:
        return self._carry(item) is not None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        result = self._carry(item)
        if result is not None:
            item.stash[_carried_key] = result
            self.carried += 1
            pytest.skip(f"soclab: carried from {self.path.name} ({result.outcome}, score {result.score:.3f})")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
        report = yield
        result = item.stash.get(_carried_key, None)
        if result is not None and report.when == "setup":
            attach_item_result(item, report, result)
        return report

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.refused:
            terminalreporter.write_line(
                f"soclab resume: nothing carried from {self.path}: " + "; ".join(self.refused))
        elif not hasattr(self.config, "workerinput"):
            agg = self.config.pluginmanager.get_plugin("soclab-aggregator")
            n = sum(1 for r in getattr(agg, "results", {}).values() if r.carried)
            terminalreporter.write_line(f"soclab resume: {n} item(s) carried from {self.path}")

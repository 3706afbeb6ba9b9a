"""What the plugin's fixtures and item body do, kept out of plugin.py so that it stays thin."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_soclab.errors import SoclabError
from pytest_soclab.plugin import itembuild, keys
from pytest_soclab.plugin.concurrency import pool_of
from pytest_soclab.plugin.settings import Settings
from pytest_soclab.run import VARIANT_FORMAT, ItemFailed, failure_text, variant_docs
from pytest_soclab.sim import BuiltCase, CaseLibrary, Simulator


def case_library(config: pytest.Config, settings: Settings, live: Any = None) -> CaseLibrary:
    return CaseLibrary(
        settings.corpus_dir,
        settings.cache_dir,
        scale=settings.scale,
        seed=settings.seed,
        build_db=not settings.live,
        progress=_progress_writer(config),
        live=live,
        variant_docs=variant_docs,
        variant_format=VARIANT_FORMAT,
    )


def _progress_writer(config: pytest.Config) -> Any:
    """Write progress lines past output capture (a case build can take a while)."""
    tr = config.pluginmanager.get_plugin("terminalreporter")
    capman = config.pluginmanager.get_plugin("capturemanager")
    if tr is None or hasattr(config, "workerinput"):
        return None

    held: list[Path] = []  # the prefix taken off pytest's line while a step runs

    def emit(line: str) -> None:
        # pytest has written "path/file.yaml " and waits for the item's letter: write on a line of
        # our own, then (once the step is done, not on its "..." line) put the prefix back.
        if isinstance(tr.currentfspath, Path):
            held[:] = [tr.currentfspath]
        tr.write_line(line)
        if held and not line.endswith("..."):
            tr.write(os.path.relpath(held[0], tr.startpath) + " ")  # as pytest shows it
            tr.currentfspath = held.pop()

    def write(line: str) -> None:
        if capman is not None:
            with capman.global_and_fixture_disabled():
                emit(line)
        else:
            emit(line)

    return write


def item_case(item: pytest.Item, library: CaseLibrary) -> BuiltCase:
    try:
        as_collected = itembuild.collected(item)
        ispec, case = itembuild.case_for(item.config, as_collected, library)
    except SoclabError as exc:
        pytest.fail(str(exc), pytrace=False)
    if ispec is not as_collected:
        item.stash[keys.collected_spec_key], item.stash[keys.item_spec_key] = as_collected, ispec
    return case


def open_backend(item: pytest.Item, case: BuiltCase, live: Any) -> Any:
    ispec = item.stash[keys.item_spec_key]
    refusal = itembuild.live_refusal(ispec, live)
    if refusal is not None:
        pytest.skip(refusal)
    if pool_of(item.config) is not None:
        return None  # --soclab-concurrency: the pool opens each item's backend where its agent runs
    return itembuild.backend_for(ispec, case, live)


def make_simulator(item: pytest.Item, case: BuiltCase, backend: Any, guard: Any, settings: Settings) -> Simulator | None:
    if pool_of(item.config) is not None:
        return None  # --soclab-concurrency: the pool builds it
    return itembuild.simulator_for(item.config, item.stash[keys.item_spec_key], case, backend, guard)


def run_and_record(item: pytest.Item, sim: Simulator | None, agent: Any, judge: Any) -> None:
    config = item.config
    settings = config.stash[keys.settings_key]
    suite = config.stash[keys.suite_key]
    ispec = item.stash[keys.item_spec_key]
    pool = pool_of(config)
    if pool is not None:
        result, calls = pool.result_for(item)
    else:
        assert sim is not None  # built by the soclab_simulator fixture
        result, calls = itembuild.run_built(config, ispec, item.nodeid, sim, agent, judge), sim.recorder.calls
    result.variant = settings.variant
    item.stash[keys.item_result_key] = result
    item.stash[keys.item_calls_key] = calls
    config.hook.pytest_soclab_item_result(item=item, result=result)
    item.user_properties.append(("soclab.score", f"{result.score:.4f}"))
    item.user_properties.append(("soclab.outcome", result.outcome))
    for dim, pts in result.dimensions.items():
        item.user_properties.append((f"soclab.dim.{dim}", f"{pts:g}"))
    if result.attack_succeeded is not None:
        item.user_properties.append(("soclab.attack_succeeded", str(result.attack_succeeded).lower()))
    if result.outcome != "passed":
        threshold = getattr(ispec.spec, "pass_score", None) or suite.task_pass_score
        raise ItemFailed(failure_text(result, item.name, threshold))

"""Build and write the results file (schema: docs/results-schema.md, pytest_soclab/data/results.schema.json)."""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import Any

from pytest_soclab import __version__
from pytest_soclab.models.results import CollectionInfo, ItemResult, ModeSummary, ResultsFile, RunInfo
from pytest_soclab.models.suite import Suite
from pytest_soclab.scoring import compare_modes, mode_summary
from pytest_soclab.settings import Settings


def build_results(
    items: list[ItemResult],
    suite: Suite,
    settings: Settings,
    repeats: int,
    collection: CollectionInfo,
    pytest_version: str,
) -> ResultsFile:
    items = sorted(items, key=lambda r: (r.mode, r.kind, r.scenario_id, r.repeat))
    modes = [m for m in settings.modes if any(r.mode == m for r in items)] or list(settings.modes)
    summaries = {m: ModeSummary.model_validate(mode_summary([r for r in items if r.mode == m], suite, repeats)) for m in modes}
    comparison = None
    if "baseline" in summaries and "protected" in summaries:
        comparison = compare_modes([r for r in items if r.mode == "baseline"], [r for r in items if r.mode == "protected"])
    run = RunInfo(
        agent=settings.agent,
        judge=settings.judge,
        modes=list(settings.modes),
        repeats=repeats,
        backend="live" if settings.live else "embedded",
        suite=str(settings.suite_path.name) if settings.suite_path else "defaults",
        soclab_version=__version__,
        pytest_version=pytest_version,
        python=platform.python_version(),
        scale=settings.scale,
        seed=settings.seed,
    )
    return ResultsFile(run=run, collection=collection, modes=summaries, comparison=comparison, items=items)


def results_dict(results: ResultsFile) -> dict[str, Any]:
    return results.model_dump(mode="json", by_alias=True)


def write_results(results: ResultsFile, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(results_dict(results), indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    tmp.replace(path)


def json_schema() -> dict[str, Any]:
    schema = ResultsFile.model_json_schema(by_alias=True)
    schema["$id"] = "https://pytest-soclab/results.schema.json"
    schema["title"] = "pytest-soclab results file"
    return schema

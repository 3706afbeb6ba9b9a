"""Write the results file (schema: docs/results-schema.md, pytest_soclab/data/results.schema.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_soclab.models import ResultsFile


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

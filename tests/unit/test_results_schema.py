"""The shipped JSON Schema of the results file is the one the models generate."""

from __future__ import annotations

import json
from importlib import resources

from pytest_soclab.report.results_json import json_schema


def test_shipped_schema_matches_models() -> None:
    shipped = json.loads(resources.files("pytest_soclab.data").joinpath("results.schema.json").read_text())
    assert shipped == json_schema(), "regenerate src/pytest_soclab/data/results.schema.json (see docs/results-schema.md)"

"""Helpers shared by the corpus tests (imported by name: tests/corpus is on sys.path under pytest)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_soclab.corpus.recipe import list_cases
from pytest_soclab.corpus.recorded import is_recorded
from pytest_soclab.models.task import Task
from pytest_soclab.models.reference import ecs_fields
from pytest_soclab.run.validate import leaves, value_fits_type

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
TASKS = ROOT / "tasks"
SMALL = 0.25  # scale used by the tests: the background is a quarter of the default

Docs = list[tuple[str, str, dict[str, Any]]]


def case_ids() -> list[str]:
    """The generated cases (recorded ones have their own tests: test_recorded_*.py)."""
    return [c for c in list_cases(CORPUS) if not is_recorded(CORPUS / c)]


def recorded_case_ids() -> list[str]:
    return [c for c in list_cases(CORPUS) if is_recorded(CORPUS / c)]


def task_files() -> list[Path]:
    return sorted(TASKS.glob("task-*.json"))


def _source_case(path: Path) -> str:
    return str(json.loads(path.read_text(encoding="utf-8")).get("source_case", ""))


def generated_task_files() -> list[Path]:
    """Tasks over generated cases (their answer keys are checked on generated data)."""
    return [p for p in task_files() if not is_recorded(CORPUS / _source_case(p))]


def recorded_task_files() -> list[Path]:
    """Tasks over recorded cases (checked on the imported recording: test_recorded_cases.py)."""
    return [p for p in task_files() if is_recorded(CORPUS / _source_case(p))]


def load_task(path: Path) -> Task:
    return Task.model_validate(json.loads(path.read_text(encoding="utf-8")))


# Namespaces the integrations (or Kibana) own: their fields are not ECS and are not checked here.
INTEGRATION_NAMESPACES = ("zeek.", "suricata.", "kibana.", "system.auth.")


def check_doc(doc: dict[str, Any]) -> list[str]:
    """ECS fields are checked against ECS; integration fields against the corpus's own definitions."""
    from pytest_soclab.models.fields import NON_ECS_FIELDS

    fields = ecs_fields()
    problems = []
    for name, value in leaves(doc):
        if name.startswith(INTEGRATION_NAMESPACES):
            spec = NON_ECS_FIELDS.get(name)
            if spec is None:
                problems.append(f"{name}: integration field missing from corpus.fields.NON_ECS_FIELDS")
                continue
        else:
            spec = fields.get(name)
        if spec is None:
            problems.append(f"{name}: not an ECS field")
            continue
        values = value if isinstance(value, list) else [value]
        # ECS allows arrays anywhere, but a list where the integration writes one value is a smell.
        if isinstance(value, list) and not spec.get("array") and name != "tags" and len(value) != 1:
            problems.append(f"{name}: a list where ECS expects one value")
        for v in values:
            if v is None or not value_fits_type(spec["type"], v):
                problems.append(f"{name}: {v!r} is not a valid {spec['type']}")
    return problems

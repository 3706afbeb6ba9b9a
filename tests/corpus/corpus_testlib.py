"""Helpers shared by the corpus tests (imported by name: tests/corpus is on sys.path under pytest)."""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path
from typing import Any

from pytest_soclab.corpus.recipe import list_cases
from pytest_soclab.models.task import Task
from pytest_soclab.reference import ecs_fields

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
TASKS = ROOT / "tasks"
SMALL = 0.25  # scale used by the tests: the background is a quarter of the default

Docs = list[tuple[str, str, dict[str, Any]]]


def case_ids() -> list[str]:
    return list_cases(CORPUS)


def task_files() -> list[Path]:
    return sorted(TASKS.glob("task-*.json"))


def load_task(path: Path) -> Task:
    return Task.model_validate(json.loads(path.read_text(encoding="utf-8")))


# Namespaces the integrations (or Kibana) own: their fields are not ECS and are not checked here.
INTEGRATION_NAMESPACES = ("zeek.", "suricata.", "kibana.", "system.auth.")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def _leaves(doc: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out = []
    for k, v in doc.items():
        key = prefix + k
        if isinstance(v, dict):
            out += _leaves(v, key + ".")
        elif isinstance(v, list) and v and all(isinstance(i, dict) for i in v):
            for item in v:
                out += _leaves(item, key + ".")
        else:
            out.append((key, v))
    return out


def _ok(ftype: str, value: Any) -> bool:
    if ftype in ("keyword", "constant_keyword", "wildcard", "match_only_text", "text", "flattened"):
        return isinstance(value, str)
    if ftype in ("long", "integer", "short", "byte", "unsigned_long"):
        return isinstance(value, int) and not isinstance(value, bool)
    if ftype in ("float", "double", "scaled_float", "half_float"):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if ftype == "boolean":
        return isinstance(value, bool)
    if ftype == "date":
        return isinstance(value, str) and bool(_DATE.match(value))
    if ftype == "ip":
        try:
            ipaddress.ip_address(value)
        except (ValueError, TypeError):
            return False
        return True
    if ftype in ("object", "nested"):
        return False  # an object field holds sub-fields, not a value
    return False


def check_doc(doc: dict[str, Any]) -> list[str]:
    """ECS fields are checked against ECS; integration fields against the corpus's own definitions."""
    from pytest_soclab.corpus.fields import NON_ECS_FIELDS

    fields = ecs_fields()
    problems = []
    for name, value in _leaves(doc):
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
            if not _ok(spec["type"], v):
                problems.append(f"{name}: {v!r} is not a valid {spec['type']}")
    return problems

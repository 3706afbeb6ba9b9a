"""Helpers shared by the corpus tests (imported by name: tests/corpus is on sys.path under pytest)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_soclab.corpus.recipe import list_cases
from pytest_soclab.models.task import Task

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

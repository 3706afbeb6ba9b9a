"""The reference data shipped in `pytest_soclab/data`: ATT&CK ids and ECS field definitions."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


def _load(name: str) -> dict[str, Any]:
    return json.loads(resources.files("pytest_soclab.data").joinpath(name).read_text(encoding="utf-8"))


@cache
def attack() -> dict[str, Any]:
    return _load("attack.json")


def attack_tactics() -> frozenset[str]:
    return frozenset(attack()["tactics"])


def attack_techniques() -> dict[str, dict[str, Any]]:
    """Technique id -> {name, tactics, platforms}."""
    return attack()["techniques"]


@cache
def ecs_fields() -> dict[str, dict[str, Any]]:
    """Flat ECS field name -> {type, array?, ignore_above?, multi_fields?}."""
    return _load("ecs_fields.json")["fields"]

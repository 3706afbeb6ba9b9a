"""Load the suite configuration: packaged defaults, overridden by a project's soclab.yaml."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from pytest_soclab.models.loader import parse_text, validate
from pytest_soclab.models.suite import Suite


def default_suite_data() -> dict[str, Any]:
    text = resources.files("pytest_soclab.defaults").joinpath("soclab.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Families merge per kind and name, gates by name; any other key (levels included) replaces."""
    out = dict(base)
    for key, value in override.items():
        if key == "families" and isinstance(value, dict):
            fams = {k: dict(v) for k, v in base.get("families", {}).items()}
            for kind, members in value.items():
                fams.setdefault(kind, {}).update(members or {})
            out["families"] = fams
        elif key == "gates" and isinstance(value, dict):
            out["gates"] = {**base.get("gates", {}), **value}
        else:
            out[key] = value
    return out


def load_suite(path: Path | None) -> Suite:
    data = default_suite_data()
    text = ""
    shown = Path("soclab.yaml (defaults)")
    if path is not None:
        text = path.read_text(encoding="utf-8")
        override = parse_text(text, path) or {}
        if not isinstance(override, dict):
            from pytest_soclab.errors import ScenarioFileError

            raise ScenarioFileError(str(path), [("", "expected a mapping at the top level")])
        data = merge(data, override)
        shown = path
    return validate(Suite, data, shown, text)

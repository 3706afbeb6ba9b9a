"""Scenario, task and suite files -> validated models, or a ScenarioFileError naming file, field and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from pytest_soclab.errors import ScenarioFileError
from pytest_soclab.models.safe_yaml import MAX_FILE_BYTES, YamlProblem, load_yaml
from pytest_soclab.models.scenario import AttackScenario, BenignScenario
from pytest_soclab.models.task import Task

Spec = Task | AttackScenario | BenignScenario


def kind_of_path(path: Path) -> str | None:
    """The kind a file's name announces, or None when it is not a scenario file."""
    name = path.name
    if name.startswith("task-") and name.endswith(".json"):
        return "task"
    if name.startswith("ATK-") and name.endswith((".yaml", ".yml")):
        return "attack"
    if name.startswith("BEN-") and name.endswith((".yaml", ".yml")):
        return "benign"
    return None


_MODELS: dict[str, type[BaseModel]] = {"task": Task, "attack": AttackScenario, "benign": BenignScenario}


def _field_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _yaml_lines(text: str) -> dict[tuple[Any, ...], int]:
    """Map each key path of a YAML (or JSON) document to its 1-based line, to point at the problem."""
    lines: dict[tuple[Any, ...], int] = {}
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return lines

    def walk(node: yaml.Node, path: tuple[Any, ...]) -> None:
        lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key = (*path, k.value)
                lines[key] = k.start_mark.line + 1
                walk(v, key)
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, (*path, i))

    if root is not None:
        walk(root, ())
    return lines


def _problems(exc: ValidationError, text: str) -> list[tuple[str, str]]:
    lines = _yaml_lines(text)
    out: list[tuple[str, str]] = []
    for err in exc.errors(include_url=False):
        # pydantic adds the union member or validator name to loc; keep the data path only.
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        msg = err["msg"].removeprefix("Value error, ")
        line = next((lines[loc[:n]] for n in range(len(loc), -1, -1) if loc[:n] in lines), None)
        where = _field_path(loc) or "(top level)"
        if line:
            where += f" (line {line})"
        if err["type"] == "extra_forbidden":
            msg = "unknown field (misspelt?)"
        elif err["type"] == "missing":
            msg = "required field missing"
        out.append((where, msg))
    return out


# libyaml's safe loader when PyYAML was built with it: the pure-Python one is most of collection's time.
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_text(text: str, path: Path) -> Any:
    try:
        if path.suffix == ".json":
            return json.loads(text)
        return load_yaml(text)
    except json.JSONDecodeError as exc:
        raise ScenarioFileError(str(path), [(f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}")])
    except RecursionError:
        raise ScenarioFileError(str(path), [("", "nested too deeply to be a scenario file")]) from None
    except YamlProblem as exc:
        raise ScenarioFileError(str(path), [(exc.where, f"invalid YAML: {exc.message}")]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScenarioFileError(str(path), [(where, f"invalid YAML: {problem}")])


def validate(model: type[BaseModel], data: Any, path: Path, text: str = "") -> Any:
    if not isinstance(data, dict):
        raise ScenarioFileError(str(path), [("", f"expected a mapping at the top level, got {type(data).__name__}")])
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ScenarioFileError(str(path), _problems(exc, text)) from None


def load_spec(path: Path, display: str | None = None) -> Spec:
    """Load one task / ATK / BEN file. `display` is the path to show in errors (e.g. relative)."""
    kind = kind_of_path(path)
    shown = Path(display) if display else path
    if kind is None:
        raise ScenarioFileError(str(shown), [("", "not a scenario file name (task-*.json, ATK-*.yaml, BEN-*.yaml)")])
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ScenarioFileError(str(shown), [("", f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB: not a scenario file")])
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioFileError(str(shown), [("", f"not a text file (UTF-8): byte {exc.start} is invalid")]) from None
    except OSError as exc:
        raise ScenarioFileError(str(shown), [("", f"cannot read: {exc}")]) from None
    if "\x00" in text:
        raise ScenarioFileError(str(shown), [("", "not a text file: it contains NUL bytes")])
    data = parse_text(text, shown)
    spec = validate(_MODELS[kind], data, shown, text)
    stem = path.name.rsplit(".", 1)[0]
    if spec.id != stem:
        raise ScenarioFileError(str(shown), [("id", f"is {spec.id!r} but the file is named {path.name!r}")])
    return spec

"""The import rule of docs/architecture.md, checked on the source (nothing of the package is imported)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("structure_report", REPO / "scripts" / "structure_report.py")
assert _spec is not None and _spec.loader is not None
structure = importlib.util.module_from_spec(_spec)
sys.modules["structure_report"] = structure
_spec.loader.exec_module(structure)

BASE = {"errors", "models", "faces"}
# room -> the rooms it may import (docs/architecture.md, "Who may import whom").
MAY_IMPORT: dict[str, set[str]] = {
    "__init__": BASE,
    "errors": set(),
    "faces": set(),
    "gcpause": set(),
    "stats": set(),
    "textread": set(),
    "models": {"errors", "faces"},
    "llm": BASE,
    "store": BASE | {"gcpause"},
    "importers": BASE,
    "pseudonymize": BASE | {"gcpause"},
    "guard": BASE | {"gcpause", "textread"},
    "corpus": BASE | {"gcpause", "importers"},
    "sim": BASE | {"gcpause", "store", "guard", "corpus"},
    "bridge": BASE | {"llm"},
    "agents": BASE | {"llm", "bridge", "textread"},
    "judge": BASE | {"llm", "stats"},
    "scoring": BASE | {"stats", "judge"},
    "report": BASE | {"stats", "scoring"},
}
BELOW_RUN = set(MAY_IMPORT) - {"__init__"}
MAY_IMPORT["run"] = BELOW_RUN
MAY_IMPORT["attacks"] = BELOW_RUN | {"run"}
MAY_IMPORT["plugin"] = BELOW_RUN | {"run", "attacks", "__init__"}
MAY_IMPORT["cli"] = BELOW_RUN | {"run", "attacks", "__init__"}

PYTEST_MODULES = ("pytest", "_pytest", "pytest_html", "xdist", "pluggy")


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _edges() -> list[tuple[str, str, str]]:
    files = sorted(structure.SRC.rglob("*.py"))
    modules = {structure.module_name(p) for p in files}
    out = []
    for path in files:
        mod = structure.module_name(path)
        for target, _lazy, _typing in structure.imports(path, modules):
            out.append((mod, target, str(path.relative_to(REPO))))
    return out


def test_every_room_is_in_the_rule() -> None:
    rooms = {_room(structure.module_name(p)) for p in structure.SRC.rglob("*.py")}
    assert rooms <= set(MAY_IMPORT), f"rooms without a rule in this test and docs/architecture.md: {rooms - set(MAY_IMPORT)}"


def test_rooms_import_only_what_is_under_them() -> None:
    wrong = sorted(
        f"{where}: {_room(src)} -> {_room(dst)} ({dst})"
        for src, dst, where in _edges()
        if _room(src) != _room(dst) and _room(dst) not in MAY_IMPORT[_room(src)]
    )
    assert not wrong, "imports against docs/architecture.md:\n" + "\n".join(wrong)


def test_no_import_loops() -> None:
    assert structure.report()["import_loops"] == []


def test_only_the_plugin_imports_pytest() -> None:
    offenders = []
    for path in sorted(structure.SRC.rglob("*.py")):
        if _room(structure.module_name(path)) == "plugin":
            continue
        for name in structure.external_imports(path):
            if name.split(".")[0] in PYTEST_MODULES:
                offenders.append(f"{path.relative_to(REPO)}: {name}")
    assert not offenders, "\n".join(offenders)


@pytest.mark.parametrize("room", ["plugin", "run", "bridge", "models"])
def test_the_wings_exist(room: str) -> None:
    assert (structure.SRC / room / "__init__.py").is_file()

"""Lazy package faces: a room names what it offers, and a name's module loads on first use.

Rooms whose modules pull in heavy libraries (DuckDB and Arrow for the store, scipy for
the judges, the generators of the corpus) expose their names this way, so that importing
the room's face costs nothing until a name is used (PEP 562).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_face(package: str, where: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose names live in the modules `where` names."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals_of(package)[name] = value  # the next lookup is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted(where)

    return __getattr__, __dir__


def globals_of(package: str) -> dict[str, Any]:
    return vars(importlib.import_module(package))

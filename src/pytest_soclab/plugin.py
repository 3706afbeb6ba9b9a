"""pytest hooks of soclab (being built: options only for now)."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("soclab", "pytest-soclab: SecOps agent benchmark")
    group.addoption("--soclab-mode", choices=("baseline", "protected", "both"), default=None)

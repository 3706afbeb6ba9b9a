"""Session fixtures for the scenario-library tests: one case cache and one guard for every run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from scenario_runs import REPO, Runner

from pytest_soclab.guard import load_guard
from pytest_soclab.sim.cases import CaseLibrary


@pytest.fixture(scope="session")
def runner() -> Iterator[Runner]:
    # The benchmark's own cache directory and default scale: the calibration is a claim about the
    # benchmark as shipped, and a developer who ran it already has the cases built.
    library = CaseLibrary(REPO / "corpus", REPO / ".soclab-cache")
    guard = load_guard(REPO / "rego")
    try:
        yield Runner(library, guard)
    finally:
        guard.close()

"""Shared fixtures of the plugin's own tests."""

from __future__ import annotations

from pathlib import Path

import pytest

# In-process pytester runs drop the modules a run imported when it ends; native extensions
# (DuckDB aborts) cannot be imported a second time, so import them once, here, for good.
import duckdb  # noqa: F401
import numpy  # noqa: F401
import pyarrow  # noqa: F401
import regorus  # noqa: F401
import scipy.stats  # noqa: F401  (soclab imports it on first use: that may be inside a pytester run)

# Likewise keep soclab's store loaded: it caches its read-only DuckDB connections per process,
# and DuckDB keeps one database instance per file per process.
import pytest_soclab.store.embedded  # noqa: F401

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def soclab_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One case cache for the whole test session: a case is built once, then reused (as in real runs)."""
    return tmp_path_factory.mktemp("soclab-cache")

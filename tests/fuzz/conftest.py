"""Fixtures of the hostile-input tests: one small store per session, and its HTTP endpoint."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from fuzz_data import DOCS

from pytest_soclab.store.embedded import EmbeddedBackend, build_database


@pytest.fixture(scope="session")
def fuzz_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuzzstore") / "fuzz.duckdb"
    build_database(DOCS, path)
    return path


@pytest.fixture(scope="session")
def fuzz_backend(fuzz_store: Path) -> Iterator[EmbeddedBackend]:
    b = EmbeddedBackend.open(fuzz_store, now=dt.datetime(2024, 5, 2, 12, 30))
    yield b
    b.close()

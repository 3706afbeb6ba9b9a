"""Fixtures of the store tests: the fixed data set built once per session."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from served import served
from store_testdata import DOCS

from pytest_soclab.store.embedded import EmbeddedBackend, build_database


@pytest.fixture(scope="session")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store") / "case.duckdb"
    build_database(DOCS, path)
    return path


@pytest.fixture()
def backend(store_path: Path) -> Iterator[EmbeddedBackend]:
    b = EmbeddedBackend.open(store_path, now=dt.datetime(2024, 5, 2, 12, 30))
    yield b
    b.close()


@pytest.fixture()
def server(store_path: Path) -> Iterator[str]:
    """`soclab serve`'s endpoint over the fixed data set, on a free port."""
    with served(store_path) as url:
        yield url

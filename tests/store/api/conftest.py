"""A served store and the official client against it, for the read API tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch
from served import served


@pytest.fixture(scope="module")
def url(store_path: Path) -> Iterator[str]:
    with served(store_path) as where:
        yield where


@pytest.fixture()
def es(url: str) -> Iterator[Elasticsearch]:
    client = Elasticsearch(url)
    yield client
    client.close()

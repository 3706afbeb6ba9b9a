"""A served store and the official client against it, for the read API tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from pytest_soclab.store.embedded import EmbeddedBackend
from pytest_soclab.store.http import serve_in_thread


@pytest.fixture(scope="module")
def url(store_path: Path) -> Iterator[str]:
    backend = EmbeddedBackend.open(store_path)
    srv, thread = serve_in_thread(backend)
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()
    thread.join(5)
    backend.close()


@pytest.fixture()
def es(url: str) -> Iterator[Elasticsearch]:
    client = Elasticsearch(url)
    yield client
    client.close()

"""`soclab serve`'s endpoint honours `?pretty`, as Elasticsearch does."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_soclab.store.embedded import EmbeddedBackend
from pytest_soclab.store.http import serve_in_thread


@pytest.fixture()
def server(store_path: Path) -> Iterator[str]:
    backend = EmbeddedBackend.open(store_path)
    srv, thread = serve_in_thread(backend)
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()
    thread.join(5)
    backend.close()


def _get(url: str) -> str:
    with urllib.request.urlopen(url) as resp:
        return resp.read().decode()


@pytest.mark.parametrize("query", ["?pretty", "?pretty=true", "?q=body:fox&pretty"])
def test_pretty_answers_are_indented(server: str, query: str) -> None:
    body = _get(server + "/notes/_search" + query)
    assert body.startswith('{\n  "') and body.endswith("}\n")
    assert json.loads(body)["hits"]


@pytest.mark.parametrize("query", ["", "?pretty=false"])
def test_plain_answers_are_one_line(server: str, query: str) -> None:
    assert "\n" not in _get(server + "/_cluster/health" + query)

"""`soclab serve`'s endpoint honours `?pretty`, as Elasticsearch does."""

from __future__ import annotations

import json
import urllib.request

import pytest



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

"""_cat/shards, _cat/count, _cat/aliases, cat formats, and _field_caps: through the official client."""

from __future__ import annotations

import urllib.request

from elasticsearch import Elasticsearch
from store_testdata import CONN, PROC


def test_cat_shards(es: Elasticsearch) -> None:
    rows = es.cat.shards(format="json")
    mine = {r["index"]: r for r in rows}
    row = mine[f".ds-{PROC}-2024.05.01-000001"]
    assert row["shard"] == "0" and row["prirep"] == "p" and row["state"] == "STARTED" and row["docs"] == "8"
    assert set(row) == {"index", "shard", "prirep", "state", "docs", "store", "dataset", "ip", "node"}
    assert [r["index"] for r in es.cat.shards(index="notes", format="json")] == ["notes"]
    text = es.cat.shards(index="notes", v=True)
    head, line = text.splitlines()
    assert head.split()[:5] == ["index", "shard", "prirep", "state", "docs"] and line.split()[:4] == ["notes", "0", "p", "STARTED"]


def test_cat_count_and_aliases(es: Elasticsearch) -> None:
    (row,) = es.cat.count(index=CONN, format="json")
    assert row["count"] == "5" and set(row) == {"epoch", "timestamp", "count"}
    assert es.cat.count(index="notes", h="count") == "2\n"
    assert es.cat.aliases(format="json") == []
    assert es.cat.aliases() == ""


def _get(url: str) -> str:
    with urllib.request.urlopen(url) as resp:
        return resp.read().decode()


def test_cat_formats_and_columns(es: Elasticsearch, url: str) -> None:
    assert _get(url + "/_cat/indices/notes?h=index,docs.count&format=csv") == "index,docs.count\nnotes,2\n"
    assert _get(url + "/_cat/indices/notes?h=index,docs.count&format=tsv&v") == "index\tdocs.count\nnotes\t2\n"
    assert _get(url + "/_cat/indices/notes?h=index,docs.count") == "notes 2\n"
    rows = es.cat.indices(index="logs-*", h="index,docs.count", s="docs.count:desc", format="json")
    assert [r["docs.count"] for r in rows] == ["8", "5"]
    assert _get(url + "/_cat/count/notes?format=json&filter_path=count")


def test_field_caps(es: Elasticsearch) -> None:
    res = es.field_caps(index="notes", fields="*")
    assert res["indices"] == ["notes"]
    assert res["fields"]["views"]["long"]["aggregatable"] is True
    assert res["fields"]["body"]["text"] == {"type": "text", "metadata_field": False, "searchable": True,
                                              "aggregatable": False}  # fmt: skip
    assert res["fields"]["_id"]["_id"]["metadata_field"] is True
    res = es.field_caps(index="logs-*", fields=["host.*", "destination.ip"])
    assert res["fields"]["host.name"]["keyword"]["aggregatable"] is True
    assert res["fields"]["destination.ip"]["ip"]["searchable"] is True
    assert "process.name" not in res["fields"]
    res = es.field_caps(index="logs-*", fields="host.name", include_unmapped=True)
    assert set(res["fields"]["host.name"]) == {"keyword", "unmapped"}
    assert res["fields"]["host.name"]["unmapped"]["indices"] == [".ds-logs-zeek.conn-default-2024.05.01-000001"]
    res = es.field_caps(index="notes", fields="*", types="long", filters="-metadata")
    assert set(res["fields"]) == {"views"}

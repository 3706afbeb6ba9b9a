"""_count, GET _doc and _source by id, _mget: through the official client."""

from __future__ import annotations

import pytest
from elasticsearch import ApiError, Elasticsearch, NotFoundError
from store_testdata import CONN, PROC


def test_count_all_query_and_q(es: Elasticsearch) -> None:
    assert es.count(index=PROC)["count"] == 8
    assert es.count(index=PROC, query={"term": {"host.name": "web-01"}})["count"] == 4
    assert es.count(index="notes", q="body:fox")["count"] == 1
    assert es.count(index="logs-*")["count"] == 13
    assert es.count()["_shards"]["failed"] == 0


def test_count_errors(es: Elasticsearch) -> None:
    with pytest.raises(NotFoundError) as err:
        es.count(index="nope")
    assert err.value.error == "index_not_found_exception"
    with pytest.raises(ApiError) as bad:
        es.count(index=PROC, body={"size": 3})
    assert bad.value.meta.status == 400 and "request does not support [size]" in str(bad.value)


def test_get_document_and_source(es: Elasticsearch) -> None:
    doc = es.get(index="notes", id="n1")
    assert doc["found"] is True and doc["_id"] == "n1" and doc["_index"] == "notes"
    assert doc["_source"]["title"] == "Quick brown fox" and doc["_version"] == 1
    part = es.get(index="notes", id="n1", source_includes=["views"])
    assert part["_source"] == {"views": 3}
    assert es.get_source(index="notes", id="n2")["views"] == 10
    proc = es.get(index=PROC, id="p4")
    assert proc["_index"].startswith(f".ds-{PROC}") and proc["_source"]["host"]["name"] == "db-01"
    assert es.exists(index="notes", id="n1") and not es.exists(index="notes", id="zz")


def test_get_missing(es: Elasticsearch) -> None:
    with pytest.raises(NotFoundError) as err:
        es.get(index="notes", id="zz")
    assert err.value.body == {"_index": "notes", "_id": "zz", "found": False}
    with pytest.raises(NotFoundError) as err:
        es.get_source(index="notes", id="zz")
    assert err.value.error == "resource_not_found_exception"
    with pytest.raises(NotFoundError) as err:
        es.get(index="nope", id="1")
    assert err.value.error == "index_not_found_exception"


def test_mget(es: Elasticsearch) -> None:
    res = es.mget(docs=[{"_index": "notes", "_id": "n1"}, {"_index": CONN, "_id": "c2"}, {"_index": "notes", "_id": "x"},
                        {"_index": "nope", "_id": "1"}])  # fmt: skip
    docs = res["docs"]
    assert docs[0]["found"] and docs[0]["_source"]["views"] == 3
    assert docs[1]["_source"]["destination"]["port"] == 4444
    assert docs[2] == {"_index": "notes", "_id": "x", "found": False}
    assert docs[3]["error"]["type"] == "index_not_found_exception"
    res = es.mget(index="notes", ids=["n2", "n1"], source=["title"])
    assert [d["_source"] for d in res["docs"]] == [{"title": "Lazy dogs"}, {"title": "Quick brown fox"}]

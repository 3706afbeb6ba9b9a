"""_msearch, index options, highlight, filter_path and pretty: through the official client."""

from __future__ import annotations

import json
import urllib.request

import pytest
from elasticsearch import Elasticsearch, NotFoundError
from store_testdata import ALERTS, PROC


def test_msearch_answers_each_search_in_place(es: Elasticsearch) -> None:
    res = es.msearch(searches=[
        {"index": PROC}, {"query": {"term": {"host.name": "db-01"}}, "size": 0},
        {"index": "nope"}, {"query": {"match_all": {}}},
        {}, {"query": {"match": {"body": "fox"}}},
    ], index="notes")  # fmt: skip
    first, missing, default = res["responses"]
    assert first["status"] == 200 and first["hits"]["total"]["value"] == 2
    assert missing["status"] == 404 and missing["error"]["type"] == "index_not_found_exception"
    assert [h["_id"] for h in default["hits"]["hits"]] == ["n1"]


def test_allow_no_indices_and_ignore_unavailable(es: Elasticsearch) -> None:
    with pytest.raises(NotFoundError) as err:
        es.search(index="nothing-*", allow_no_indices=False)
    assert err.value.error == "index_not_found_exception" and "nothing-*" in str(err.value)
    assert es.search(index="nothing-*")["hits"]["total"]["value"] == 0
    with pytest.raises(NotFoundError):
        es.search(index="notes,nope")
    res = es.search(index="notes,nope", ignore_unavailable=True)
    assert res["hits"]["total"]["value"] == 2
    with pytest.raises(NotFoundError):
        es.count(index="nothing-*", allow_no_indices=False)


def test_expand_wildcards(es: Elasticsearch) -> None:
    # hidden indices (the alerts index, backing indices) only with hidden or all
    assert es.count(index=".alerts-*")["count"] == 2  # a pattern that starts with a dot names them
    assert es.count(index="*")["count"] == 15
    assert es.count(index="*", expand_wildcards="all")["count"] == 17
    assert es.count(index="*", expand_wildcards="open,hidden")["count"] == 17
    assert es.count(index="*", expand_wildcards="none")["count"] == 0
    with pytest.raises(NotFoundError):
        es.count(index="*", expand_wildcards="none", allow_no_indices=False)
    assert es.count(index=ALERTS, expand_wildcards="none")["count"] == 2  # concrete names are not wildcards


def test_highlight_marks_query_terms(es: Elasticsearch) -> None:
    res = es.search(index="notes", query={"match": {"body": "lazy fox"}},
                    highlight={"fields": {"body": {}}, "pre_tags": ["<b>"], "post_tags": ["</b>"]})  # fmt: skip
    marks = {h["_id"]: h["highlight"]["body"] for h in res["hits"]["hits"]}
    assert marks["n1"] == ["The quick brown <b>fox</b> jumps over the <b>lazy</b> dog"]
    assert marks["n2"] == ["Dogs are <b>lazy</b>; foxes are quick."]
    res = es.search(index="notes", query={"query_string": {"query": "quick"}}, highlight={"fields": {"*": {}}},
                    source=["views"])  # fmt: skip
    hit = next(h for h in res["hits"]["hits"] if h["_id"] == "n1")
    assert hit["_source"] == {"views": 3}
    assert hit["highlight"]["title"] == ["<em>Quick</em> brown fox"]
    assert hit["highlight"]["body"] == ["The <em>quick</em> brown fox jumps over the lazy dog"]


def test_highlight_fragments(es: Elasticsearch) -> None:
    res = es.search(index="notes", query={"match": {"body": "dog"}},
                    highlight={"fields": {"body": {"fragment_size": 18, "number_of_fragments": 1}}})  # fmt: skip
    (frag,) = res["hits"]["hits"][0]["highlight"]["body"]
    assert "<em>dog</em>" in frag and len(frag) < 40


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_filter_path_and_pretty(es: Elasticsearch, url: str) -> None:
    res = es.search(index="notes", query={"match": {"body": "fox"}}, filter_path=["hits.hits._id", "took"])
    assert set(res.body) == {"hits", "took"} and res["hits"] == {"hits": [{"_id": "n1"}]}
    res = es.search(index="notes", filter_path="-hits.hits,-_shards")
    assert "hits" in res and "hits" not in res["hits"] and "_shards" not in res
    res = es.search(index="notes", filter_path="**._id")
    assert res.body == {"hits": {"hits": [{"_id": "n1"}, {"_id": "n2"}]}}
    code, body = _get(url + "/_count?pretty")
    assert code == 200 and body.decode().startswith('{\n  "count"')
    code, body = _get(url + "/_count?filter_path=nothing")
    assert json.loads(body) == {}


def test_mapping_takes_the_index_options(es: Elasticsearch) -> None:
    with pytest.raises(NotFoundError):
        es.indices.get_mapping(index="nothing-*", allow_no_indices=False)
    assert es.indices.get_mapping(index="nothing-*").body == {}
    assert set(es.indices.get_mapping(index="notes,nope", ignore_unavailable=True).body) == {"notes"}
    assert ALERTS in " ".join(es.indices.get_mapping(index="*", expand_wildcards="all").body)

"""Query DSL against the fixed data set: each query type, response shape, errors."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_soclab.errors import EsError
from pytest_soclab.store.embedded import EmbeddedBackend

from store_testdata import CONN, NOTES, PROC


def ids(res: dict[str, Any]) -> list[str]:
    return [h["_id"] for h in res["hits"]["hits"]]


def q(backend: EmbeddedBackend, query: dict[str, Any], index: str = PROC, **body: Any) -> dict[str, Any]:
    return backend.es_search(index, {"query": query, "size": 100, **body})


def test_response_shape(backend: EmbeddedBackend) -> None:
    res = backend.es_search(PROC, {"query": {"match_all": {}}, "size": 1})
    assert set(res) == {"took", "timed_out", "_shards", "hits"}
    assert res["timed_out"] is False and res["_shards"]["failed"] == 0
    assert res["hits"]["total"] == {"value": 8, "relation": "eq"}
    hit = res["hits"]["hits"][0]
    assert set(hit) == {"_index", "_id", "_score", "_source"}
    assert hit["_score"] == 1.0 and res["hits"]["max_score"] == 1.0


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"term": {"host.name": "db-01"}}, {"p4", "p5"}),
        ({"term": {"host.name": {"value": "DB-01", "case_insensitive": True}}}, {"p4", "p5"}),
        ({"term": {"host.name": "DB-01"}}, set()),
        ({"terms": {"process.name": ["curl", "sh"]}}, {"p2", "p3"}),
        ({"term": {"process.args": "-enc"}}, {"p6"}),  # multi-valued: any value
        ({"term": {"host.ip": "10.0.0.0/8"}}, {f"p{i}" for i in range(1, 9)}),
        ({"term": {"host.ip": "10.0.0.2"}}, {"p4", "p5"}),
        ({"term": {"process.pid": "201"}}, {"p5"}),
        ({"range": {"process.pid": {"gte": 200, "lt": 300}}}, {"p4", "p5"}),
        ({"range": {"@timestamp": {"gte": "2024-05-02"}}}, {"p6", "p7", "p8"}),
        ({"range": {"@timestamp": {"gte": "now-1d/d", "lt": "now/d"}}}, {"p1", "p2", "p3", "p4", "p5"}),
        ({"range": {"@timestamp": {"lte": "2024-05-01"}}}, {"p1", "p2", "p3", "p4", "p5"}),  # lte rounds up
        ({"range": {"@timestamp": {"gt": "2024-05-01||/d"}}}, {"p6", "p7", "p8"}),
        ({"exists": {"field": "tags"}}, {"p5", "p6"}),
        ({"bool": {"must_not": {"exists": {"field": "tags"}}}}, {"p1", "p2", "p3", "p4", "p7", "p8"}),
        ({"prefix": {"process.command_line": "curl"}}, {"p2"}),
        ({"wildcard": {"process.command_line": {"value": "*X.SH*", "case_insensitive": True}}}, {"p2", "p3"}),
        ({"wildcard": {"process.command_line": "*X.SH*"}}, set()),
        ({"regexp": {"user.name": "w+w-data"}}, {"p1", "p2", "p3", "p8"}),
        ({"regexp": {"user.name": "ali.*"}}, {"p6", "p7"}),
        ({"ids": {"values": ["p1", "p7", "zz"]}}, {"p1", "p7"}),
        ({"match": {"message": "alice"}}, {"p6", "p7"}),
        ({"match": {"message": {"query": "bash alice", "operator": "and"}}}, {"p7"}),
        ({"match": {"process.name": "bash"}}, {"p1", "p7", "p8"}),
        ({"match": {"process.name.text": "BASH"}}, {"p1", "p7", "p8"}),
        ({"match_phrase": {"message": "started by root"}}, {"p4", "p5"}),
        ({"match_phrase": {"message": "by started"}}, set()),
        ({"match_phrase_prefix": {"message": "process pow"}}, {"p6"}),
        ({"multi_match": {"query": "alice", "fields": ["user.name", "message"]}}, {"p6", "p7"}),
        ({"bool": {"should": [{"term": {"user.name": "root"}}, {"term": {"user.name": "alice"}}]}},
         {"p4", "p5", "p6", "p7"}),
        ({"bool": {"should": [{"term": {"user.name": "root"}}, {"term": {"host.name": "db-01"}},
                              {"term": {"process.name": "cat"}}], "minimum_should_match": 3}}, {"p5"}),
        ({"bool": {"filter": [{"term": {"host.name": "web-01"}}], "must_not": [{"term": {"process.name": "bash"}}]}},
         {"p2", "p3"}),
        ({"constant_score": {"filter": {"term": {"user.name": "alice"}}, "boost": 2}}, {"p6", "p7"}),
        ({"query_string": {"query": "process.name:bash AND user.name:alice"}}, {"p7"}),
        ({"query_string": {"query": "process.name:(curl OR sh) -host.name:db-01"}}, {"p2", "p3"}),
        ({"query_string": {"query": "process.pid:[200 TO 300}"}}, {"p4", "p5"}),
        ({"query_string": {"query": "process.command_line:*x.sh*"}}, {"p2", "p3"}),
        ({"query_string": {"query": "\"started by alice\""}}, {"p6", "p7"}),
        ({"simple_query_string": {"query": "alice -bash", "fields": ["message"], "default_operator": "and"}}, {"p6"}),
        ({"fuzzy": {"user.name": {"value": "alise"}}}, {"p6", "p7"}),
        ({"match_none": {}}, set()),
    ],
)
def test_queries(backend: EmbeddedBackend, query: dict[str, Any], expected: set[str]) -> None:
    assert set(ids(q(backend, query))) == expected


def test_text_analysis_on_notes(backend: EmbeddedBackend) -> None:
    assert ids(q(backend, {"match": {"body": "FOX"}}, NOTES)) == ["n1"]
    assert set(ids(q(backend, {"match": {"body": "lazy"}}, NOTES))) == {"n1", "n2"}
    assert ids(q(backend, {"match_phrase": {"body": "lazy dog"}}, NOTES)) == ["n1"]
    assert ids(q(backend, {"term": {"title.keyword": "Lazy dogs"}}, NOTES)) == ["n2"]
    assert ids(q(backend, {"term": {"title": "Lazy dogs"}}, NOTES)) == []  # analysed field: no such token


def test_sort_size_from_and_sort_values(backend: EmbeddedBackend) -> None:
    res = backend.es_search(PROC, {"sort": [{"@timestamp": "desc"}], "size": 2, "from": 1, "_source": ["process.name"]})
    assert ids(res) == ["p7", "p6"]
    assert res["hits"]["hits"][0]["sort"] == [1714641000000]
    assert res["hits"]["hits"][0]["_score"] is None and res["hits"]["max_score"] is None
    assert res["hits"]["hits"][0]["_source"] == {"process": {"name": "bash"}}


def test_sort_missing_and_multi_mode(backend: EmbeddedBackend) -> None:
    res = backend.es_search(PROC, {"sort": [{"tags": {"order": "asc", "missing": "_first"}}, "_doc"], "size": 3})
    assert ids(res)[:1] == ["p1"]
    res = backend.es_search(CONN, {"sort": [{"destination.ip": "desc"}], "size": 1})
    # IPs sort by their 16-byte form (IPv4 mapped into IPv6), as Lucene does
    assert res["hits"]["hits"][0]["sort"] == ["2001:db8::1"]


def test_search_after_pages_through(backend: EmbeddedBackend) -> None:
    body: dict[str, Any] = {"sort": [{"@timestamp": "asc"}, {"_doc": "asc"}], "size": 3, "_source": False}
    seen: list[str] = []
    for _ in range(5):
        res = backend.es_search(PROC, body)
        hits = res["hits"]["hits"]
        if not hits:
            break
        seen += [h["_id"] for h in hits]
        body["search_after"] = hits[-1]["sort"]
    assert seen == [f"p{i}" for i in range(1, 9)]


def test_source_filtering_and_fields(backend: EmbeddedBackend) -> None:
    res = backend.es_search(PROC, {"query": {"ids": {"values": ["p5"]}}, "_source": {"includes": ["process"], "excludes": ["process.args"]},
                                   "fields": ["user.*", {"field": "@timestamp", "format": "yyyy-MM-dd"}]})  # fmt: skip
    hit = res["hits"]["hits"][0]
    assert "args" not in hit["_source"]["process"] and hit["_source"]["process"]["name"] == "cat"
    assert hit["fields"]["user.name"] == ["root"] and hit["fields"]["user.name.text"] == ["root"]
    assert hit["fields"]["@timestamp"] == ["2024-05-01"]


def test_track_total_hits(backend: EmbeddedBackend) -> None:
    assert backend.es_search(PROC, {"track_total_hits": 3})["hits"]["total"] == {"value": 3, "relation": "gte"}
    assert "total" not in backend.es_search(PROC, {"track_total_hits": False})["hits"]


def test_scores_rank_more_matching_terms_first(backend: EmbeddedBackend) -> None:
    res = q(backend, {"match": {"message": "bash alice"}})
    assert ids(res)[0] == "p7"
    assert res["hits"]["max_score"] == res["hits"]["hits"][0]["_score"] == 2.0


@pytest.mark.parametrize(
    ("body", "status", "etype", "needle"),
    [
        ({"query": {"nope": {}}}, 400, "parsing_exception", "unknown query [nope]"),
        ({"query": {"term": {"a": 1, "b": 2}}}, 400, "parsing_exception", "doesn't support multiple fields"),
        ({"query": {"bool": {"musts": []}}}, 400, "parsing_exception", "[bool] query does not support [musts]"),
        ({"foo": 1}, 400, "parsing_exception", "Unknown key for a VALUE_NUMBER in [foo]."),
        ({"size": 9000, "from": 2000}, 400, "illegal_argument_exception", "Result window is too large"),
        ({"query": {"range": {"process.pid": {"gte": "abc"}}}}, 400, "search_phase_execution_exception", "For input string"),
        ({"query": {"term": {"@timestamp": "yesterday"}}}, 400, "search_phase_execution_exception", "failed to parse date field [yesterday]"),
        ({"sort": ["message"]}, 400, "search_phase_execution_exception", "Text fields are not optimised"),
        ({"sort": ["nope"]}, 400, "search_phase_execution_exception", "No mapping found for [nope] in order to sort on"),
        ({"query": {"nested": {"path": "x", "query": {}}}}, 400, "unsupported_operation_exception", "[nested] query"),
        ({"highlight": {"fields": {"message": {}}}}, 400, "unsupported_operation_exception", "[highlight]"),
        ({"query": {"prefix": {"process.pid": "1"}}}, 400, "search_phase_execution_exception", "Can only use prefix queries"),
    ],
)
def test_errors(backend: EmbeddedBackend, body: dict[str, Any], status: int, etype: str, needle: str) -> None:
    with pytest.raises(EsError) as err:
        backend.es_search(PROC, body)
    e = err.value
    assert e.status == status and e.type == etype
    shown = e.body()["error"]
    text = shown["reason"] + " " + " ".join(c["reason"] for c in shown["root_cause"])
    assert needle in text


def test_unmapped_field_matches_nothing(backend: EmbeddedBackend) -> None:
    assert ids(q(backend, {"term": {"no.such.field": "x"}})) == []
    assert ids(q(backend, {"bool": {"must_not": [{"term": {"no.such.field": "x"}}]}}))


@pytest.mark.parametrize("expr, value", [("1.0", 1.0), ("(((1.0) + (1.0)) * 2.0)::DOUBLE", 4.0), ("-0.5 * 2", -1.0),
                                         ("(1.0) + x", None), ("1.0 / 0", None), ("CASE WHEN a THEN 1 END", None)])
def test_constant_scores_are_folded_only_when_they_are_arithmetic(expr: str, value: float | None) -> None:
    from pytest_soclab.store.dsl.search import _fold

    assert _fold(expr.replace("::DOUBLE", "")) == value


def test_a_required_should_clause_scores_as_before(backend) -> None:
    # one should clause is required by the query: its score is its own, without testing it twice
    alone = backend.es_search(NOTES, {"query": {"bool": {"should": [{"match": {"body": "fox"}}]}}})
    both = backend.es_search(NOTES, {"query": {"bool": {"should": [{"match": {"body": "fox"}},
                                                                  {"match": {"body": "nomatchword"}}]}}})  # fmt: skip
    assert [(h["_id"], h["_score"]) for h in alone["hits"]["hits"]] == [(h["_id"], h["_score"]) for h in both["hits"]["hits"]]
    assert alone["hits"]["hits"] and all(h["_score"] == 1.0 for h in alone["hits"]["hits"])

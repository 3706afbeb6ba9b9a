"""Aggregations against the fixed data set."""

from __future__ import annotations

from typing import Any

import pytest
from store_testdata import CONN, PROC

from pytest_soclab.errors import EsError
from pytest_soclab.store.embedded import EmbeddedBackend


def aggs(backend: EmbeddedBackend, spec: dict[str, Any], index: str = PROC, query: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"size": 0, "aggs": spec}
    if query is not None:
        body["query"] = query
    return backend.es_search(index, body)["aggregations"]


def test_terms_counts_order_and_other(backend: EmbeddedBackend) -> None:
    res = aggs(backend, {"h": {"terms": {"field": "host.name", "size": 2}}})["h"]
    assert res["buckets"] == [{"key": "web-01", "doc_count": 4}, {"key": "db-01", "doc_count": 2}]
    assert res["sum_other_doc_count"] == 2 and res["doc_count_error_upper_bound"] == 0
    res = aggs(backend, {"h": {"terms": {"field": "host.name", "order": {"_key": "asc"}}}})["h"]
    assert [b["key"] for b in res["buckets"]] == ["db-01", "web-01", "ws-07"]


def test_terms_multi_valued_and_min_doc_count(backend: EmbeddedBackend) -> None:
    res = aggs(backend, {"t": {"terms": {"field": "tags"}}})["t"]
    assert res["buckets"] == [{"key": "suspicious", "doc_count": 2}, {"key": "credential-access", "doc_count": 1}]
    res = aggs(backend, {"t": {"terms": {"field": "tags", "missing": "none"}}})["t"]
    assert res["buckets"][0] == {"key": "none", "doc_count": 6}
    res = aggs(backend, {"u": {"terms": {"field": "user.name", "min_doc_count": 3}}})["u"]
    assert res["buckets"] == [{"key": "www-data", "doc_count": 4}]


def test_terms_on_numbers_ips_and_booleans(backend: EmbeddedBackend) -> None:
    res = aggs(backend, {"p": {"terms": {"field": "destination.port", "size": 1}}}, CONN)["p"]
    assert res["buckets"] == [{"key": 443, "doc_count": 2}]
    res = aggs(backend, {"d": {"terms": {"field": "destination.ip"}}}, CONN)["d"]
    assert res["buckets"][0] == {"key": "198.51.100.7", "doc_count": 3}


def test_terms_ordered_by_sub_aggregation(backend: EmbeddedBackend) -> None:
    res = aggs(backend, {"s": {"terms": {"field": "source.ip", "order": {"b": "desc"}},
                               "aggs": {"b": {"sum": {"field": "network.bytes"}}}}}, CONN)["s"]  # fmt: skip
    assert [(b["key"], b["b"]["value"]) for b in res["buckets"]] == [
        ("10.0.0.1", 95120.0), ("10.0.0.2", 1200.0), ("10.0.0.3", 380.0)
    ]


def test_metrics(backend: EmbeddedBackend) -> None:
    res = aggs(backend, {
        "mn": {"min": {"field": "network.bytes"}}, "mx": {"max": {"field": "network.bytes"}},
        "av": {"avg": {"field": "network.bytes"}}, "sm": {"sum": {"field": "network.bytes"}},
        "vc": {"value_count": {"field": "network.bytes"}}, "cd": {"cardinality": {"field": "destination.ip"}},
        "st": {"stats": {"field": "destination.port"}}, "first": {"min": {"field": "@timestamp"}},
        "pc": {"percentiles": {"field": "network.bytes", "percents": [50]}},
    }, CONN)  # fmt: skip
    assert res["mn"] == {"value": 80.0} and res["mx"] == {"value": 90000.0}
    assert res["av"] == {"value": 19340.0} and res["sm"] == {"value": 96700.0}
    assert res["vc"] == {"value": 5} and res["cd"] == {"value": 3}
    assert res["st"] == {"count": 5, "min": 53.0, "max": 4444.0, "avg": 1092.6, "sum": 5463.0}
    assert res["first"] == {"value": 1714557901000.0, "value_as_string": "2024-05-01T10:05:01.000Z"}
    assert res["pc"] == {"values": {"50.0": 1200.0}}


def test_empty_metrics(backend: EmbeddedBackend) -> None:
    res = aggs(backend, {"a": {"avg": {"field": "network.bytes"}}, "s": {"sum": {"field": "network.bytes"}},
                         "c": {"value_count": {"field": "network.bytes"}}}, CONN, {"match_none": {}})  # fmt: skip
    assert res == {"a": {"value": None}, "s": {"value": 0.0}, "c": {"value": 0}}


def test_date_histogram_fills_gaps_and_formats(backend: EmbeddedBackend) -> None:
    res = aggs(backend, {"h": {"date_histogram": {"field": "@timestamp", "fixed_interval": "12h"}}})["h"]
    assert [(b["key_as_string"], b["doc_count"]) for b in res["buckets"]] == [
        ("2024-05-01T00:00:00.000Z", 5), ("2024-05-01T12:00:00.000Z", 0), ("2024-05-02T00:00:00.000Z", 2),
        ("2024-05-02T12:00:00.000Z", 1),
    ]
    res = aggs(backend, {"h": {"date_histogram": {"field": "@timestamp", "calendar_interval": "day",
                                                  "format": "yyyy-MM-dd", "min_doc_count": 1}}})["h"]  # fmt: skip
    assert [(b["key_as_string"], b["key"], b["doc_count"]) for b in res["buckets"]] == [
        ("2024-05-01", 1714521600000, 5), ("2024-05-02", 1714608000000, 3)
    ]


def test_date_histogram_time_zone(backend: EmbeddedBackend) -> None:
    res = aggs(backend, {"h": {"date_histogram": {"field": "@timestamp", "calendar_interval": "day",
                                                  "time_zone": "-12:00"}}})["h"]  # fmt: skip
    assert res["buckets"][0]["key_as_string"] == "2024-04-30T00:00:00.000-12:00"
    assert sum(b["doc_count"] for b in res["buckets"]) == 8


def test_histogram_and_range(backend: EmbeddedBackend) -> None:
    res = aggs(backend, {"h": {"histogram": {"field": "process.pid", "interval": 100}}})["h"]
    assert [(b["key"], b["doc_count"]) for b in res["buckets"]] == [(100.0, 4), (200.0, 2), (300.0, 2)]
    res = aggs(backend, {"r": {"range": {"field": "process.pid", "ranges": [{"to": 200}, {"from": 200, "to": 300}, {"from": 300}]}}})["r"]
    assert [(b["key"], b["doc_count"]) for b in res["buckets"]] == [("*-200.0", 4), ("200.0-300.0", 2), ("300.0-*", 2)]
    res = aggs(backend, {"r": {"ip_range": {"field": "destination.ip", "ranges": [{"mask": "198.51.100.0/24"}]}}}, CONN)["r"]
    assert res["buckets"][0]["doc_count"] == 3


def test_filter_filters_missing(backend: EmbeddedBackend) -> None:
    res = aggs(backend, {
        "f": {"filter": {"term": {"user.name": "root"}}, "aggs": {"p": {"max": {"field": "process.pid"}}}},
        "fs": {"filters": {"filters": {"root": {"term": {"user.name": "root"}}, "tagged": {"exists": {"field": "tags"}}},
                           "other_bucket_key": "rest"}},
        "m": {"missing": {"field": "tags"}},
    })  # fmt: skip
    assert res["f"] == {"doc_count": 2, "p": {"value": 201.0}}
    assert res["fs"]["buckets"] == {"root": {"doc_count": 2}, "tagged": {"doc_count": 2}, "rest": {"doc_count": 5}}
    assert res["m"] == {"doc_count": 6}


def test_nested_sub_aggregations_and_top_hits(backend: EmbeddedBackend) -> None:
    res = aggs(backend, {"h": {"terms": {"field": "host.name"}, "aggs": {
        "u": {"terms": {"field": "user.name"}},
        "last": {"top_hits": {"size": 1, "sort": [{"@timestamp": "desc"}], "_source": ["process.name"]}},
    }}})["h"]  # fmt: skip
    web = res["buckets"][0]
    assert web["key"] == "web-01" and web["u"]["buckets"] == [{"key": "www-data", "doc_count": 4}]
    top = web["last"]["hits"]
    assert top["total"] == {"value": 4, "relation": "eq"}
    assert top["hits"][0]["_id"] == "p8" and top["hits"][0]["_source"] == {"process": {"name": "bash"}}
    assert top["hits"][0]["sort"] == [1714651200000]


def test_composite_pages(backend: EmbeddedBackend) -> None:
    spec = {"c": {"composite": {"size": 2, "sources": [{"h": {"terms": {"field": "host.name"}}},
                                                        {"u": {"terms": {"field": "user.name"}}}]}}}  # fmt: skip
    first = aggs(backend, spec)["c"]
    assert [b["key"] for b in first["buckets"]] == [{"h": "db-01", "u": "root"}, {"h": "web-01", "u": "www-data"}]
    spec["c"]["composite"]["after"] = first["after_key"]
    second = aggs(backend, spec)["c"]
    assert [b["key"] for b in second["buckets"]] == [{"h": "ws-07", "u": "alice"}]


def test_multi_terms(backend: EmbeddedBackend) -> None:
    res = aggs(backend, {"m": {"multi_terms": {"terms": [{"field": "host.name"}, {"field": "process.name"}], "size": 1}}})["m"]
    assert res["buckets"] == [{"key": ["web-01", "bash"], "key_as_string": "web-01|bash", "doc_count": 2}]


@pytest.mark.parametrize(
    ("spec", "etype", "needle"),
    [
        ({"x": {"nope": {}}}, "parsing_exception", "Unknown aggregation type [nope]"),
        ({"x": {"terms": {"field": "message"}}}, "search_phase_execution_exception", "Text fields are not optimised"),
        ({"x": {"avg": {"field": "host.name"}}}, "illegal_argument_exception", "is not supported for aggregation [avg]"),
        ({"x": {"significant_terms": {"field": "host.name"}}}, "unsupported_operation_exception", "significant_terms"),
        ({"x": {"avg": {"field": "process.pid"}, "aggs": {"y": {"max": {"field": "process.pid"}}}}},
         "aggregation_initialization_exception", "cannot accept sub-aggregations"),
        ({"x": {"date_histogram": {"field": "@timestamp"}}}, "illegal_argument_exception", "Invalid interval"),
    ],
)
def test_agg_errors(backend: EmbeddedBackend, spec: dict[str, Any], etype: str, needle: str) -> None:
    with pytest.raises(EsError) as err:
        aggs(backend, spec)
    body = err.value.body()["error"]
    assert err.value.type == etype
    assert needle in body["reason"] + " ".join(c["reason"] for c in body["root_cause"])

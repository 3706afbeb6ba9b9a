"""Every crash, 500 and blow-up the hostile-input fuzzing found (issue 19) stays a regression
test: each is answered quickly, as Elasticsearch would, or as a 400 naming the limit."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fuzz_data import PROC

from pytest_soclab.errors import EsError
from pytest_soclab.store.embedded import EmbeddedBackend


def _esql(b: EmbeddedBackend, q: str) -> dict[str, Any] | EsError:
    started = time.perf_counter()
    try:
        out: dict[str, Any] | EsError = b.esql_query(q)
    except EsError as exc:
        out = exc
    assert time.perf_counter() - started < 8, q[:80]
    return out


def _dsl(b: EmbeddedBackend, body: Any) -> dict[str, Any] | EsError:
    started = time.perf_counter()
    try:
        out: dict[str, Any] | EsError = b.es_search(PROC, body)
    except EsError as exc:
        out = exc
    assert time.perf_counter() - started < 8, str(body)[:80]
    return out


def _err(out: object, status: int = 400, contains: str = "") -> EsError:
    assert isinstance(out, EsError), out
    assert out.status == status, out
    assert contains in out.reason, out.reason
    return out


def test_long_sum_is_fast_and_correct(fuzz_backend: EmbeddedBackend) -> None:
    out = _esql(fuzz_backend, "ROW a = " + " + ".join(["1"] * 40))
    assert isinstance(out, dict) and out["values"] == [[40]]


@pytest.mark.parametrize("query", [
    "ROW a = " + " + ".join(["1"] * 400),
    "ROW a = 1 | EVAL b = " + "CASE(a > 1, 1, " * 500 + "0" + ")" * 500,
    "ROW a = " + "(" * 40_000 + "1" + ")" * 40_000,
])  # fmt: skip
def test_deep_expressions_are_the_depth_limit(fuzz_backend: EmbeddedBackend, query: str) -> None:
    _err(_esql(fuzz_backend, query), 400, "maximum expression depth allowed")


def test_chained_evals_are_the_query_depth_limit(fuzz_backend: EmbeddedBackend) -> None:
    _err(_esql(fuzz_backend, "ROW a = 1" + " | EVAL a = a + 1" * 400), 400, "maximum query depth allowed")
    out = _esql(fuzz_backend, "ROW a = 1" + " | EVAL a = a + 1" * 40)
    assert isinstance(out, dict) and out["values"] == [[41]]


def test_wide_eval_of_concats(fuzz_backend: EmbeddedBackend) -> None:
    out = _esql(fuzz_backend, "ROW a = 1 | EVAL " + ", ".join(f"c{i} = CONCAT(TO_STRING(a), \"x{i}\")" for i in range(300)))
    assert isinstance(out, dict) and out["values"][0][300] == "1x299"


def test_eval_fields_still_see_earlier_fields_of_the_same_eval(fuzz_backend: EmbeddedBackend) -> None:
    out = _esql(fuzz_backend, "ROW a = 1 | EVAL b = a + 1, c = b * 10, a = c + b, d = a")
    assert isinstance(out, dict) and out["values"] == [[2, 20, 22, 22]]


def test_unicode_runtime_warning(fuzz_backend: EmbeddedBackend) -> None:
    out = _esql(fuzz_backend, 'ROW a = "\U0001f980" | EVAL b = TO_LONG(a)')
    assert isinstance(out, dict) and out["values"] == [["\U0001f980", None]] and out["warnings"]


@pytest.mark.parametrize("query", [
    f"FROM {PROC} | STATS c = COUNT(*) BY b = BUCKET(@timestamp, -5 minutes)",
    "ROW a = DATE_TRUNC(0 days, NOW())",
])  # fmt: skip
def test_zero_or_negative_spans(fuzz_backend: EmbeddedBackend, query: str) -> None:
    _err(_esql(fuzz_backend, query), 400, "Zero or negative time interval is not supported")


def test_mv_percentile_out_of_range_is_null_with_a_warning(fuzz_backend: EmbeddedBackend) -> None:
    out = _esql(fuzz_backend, "ROW a = MV_PERCENTILE([1, 2, 3], 200)")
    assert isinstance(out, dict) and out["values"] == [[None]]
    assert any("between 0 and 100" in w for w in out["warnings"])


def test_huge_integer_literal(fuzz_backend: EmbeddedBackend) -> None:
    _err(_esql(fuzz_backend, "ROW a = " + "9" * 5000), 400, "is too large")
    out = _esql(fuzz_backend, "ROW a = 99999999999999999999")
    assert isinstance(out, dict) and out["values"] == [[1e20]]


def test_repeat_output_is_capped(fuzz_backend: EmbeddedBackend) -> None:
    out = _esql(fuzz_backend, 'ROW a = REPEAT("aaaaaaaaaa", 100000000), b = SPACE(2000000), c = REPEAT("ab", 2)')
    assert isinstance(out, dict) and out["values"] == [[None, None, "abab"]]
    assert any("Creating repeated strings with more than [1048576] bytes" in w for w in out["warnings"])


def test_dsl_date_math_out_of_range(fuzz_backend: EmbeddedBackend) -> None:
    _err(_dsl(fuzz_backend, {"query": {"range": {"@timestamp": {"gte": "now-1000000000y"}}}}), 400)


@pytest.mark.parametrize("body,contains", [
    ({"size": float("inf")}, "[size]"),
    ({"query": {"multi_match": {"query": "x", "fields": True}}}, "unknown token [VALUE_BOOLEAN] after [fields]"),
    ({"query": {"query_string": {"query": "x", "fields": 5}}}, "after [fields]"),
    ({"fields": [{"field": "@timestamp", "format": "yyyy-'bad"}]}, "Invalid format"),
    ({"fields": [{"field": "@timestamp", "format": 5}]}, "[format] must be a string"),
])  # fmt: skip
def test_dsl_bad_parameters_are_400s(fuzz_backend: EmbeddedBackend, body: dict, contains: str) -> None:
    _err(_dsl(fuzz_backend, body), 400, contains)


def test_dsl_limits(fuzz_backend: EmbeddedBackend) -> None:
    filters = {f"k{i}": {"term": {"host.name": f"h{i}"}} for i in range(3000)}
    _err(_dsl(fuzz_backend, {"size": 0, "aggs": {"f": {"filters": {"filters": filters}}}}), 400, "filters")
    _err(_dsl(fuzz_backend, {"query": {"regexp": {"host.name": "(a*)*" * 300}}}), 400, "index.max_regex_length")
    _err(_dsl(fuzz_backend, {"size": 0, "aggs": {"t": {"terms": {"field": "host.name", "size": 100_000}}}}), 400, "search.max_buckets")
    q: dict = {"match_all": {}}
    for _ in range(40):
        q = {"bool": {"must": [q]}}
    _err(_dsl(fuzz_backend, {"query": q}), 400, "indices.query.bool.max_nested_depth")
    many = {"bool": {"should": [{"term": {"host.name": f"h{i}"}} for i in range(2000)]}}
    _err(_dsl(fuzz_backend, {"query": many}), 400, "indices.query.bool.max_clause_count")
    qs = {"query_string": {"query": " OR ".join(f"a{i}" for i in range(200))}}
    _err(_dsl(fuzz_backend, {"query": qs}), 400, "indices.query.bool.max_clause_count")


def test_nested_dis_max_runs(fuzz_backend: EmbeddedBackend) -> None:
    q: dict = {"term": {"host.name": "web-01"}}
    for _ in range(12):
        q = {"dis_max": {"queries": [q, {"exists": {"field": "user.name"}}], "tie_breaker": 0.3}}
    out = _dsl(fuzz_backend, {"query": q})
    assert isinstance(out, dict) and out["hits"]["total"]["value"] == 6

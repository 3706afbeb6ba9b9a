"""Property tests and fuzzing: no input may crash the ES|QL parser/translator or the DSL
translator with anything but an Elasticsearch-shaped error; and a few semantic laws hold.

Set SOCLAB_FUZZ_EXAMPLES to run longer (e.g. 20000) than the default quick run.
"""

from __future__ import annotations

import os
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_testdata import CONN, PROC

from pytest_soclab.errors import EsError
from pytest_soclab.store.embedded import EmbeddedBackend

EXAMPLES = int(os.environ.get("SOCLAB_FUZZ_EXAMPLES", "150"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)


@pytest.fixture(scope="module")
def fb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBackend]:
    import datetime as dt

    from store_testdata import DOCS

    from pytest_soclab.store.embedded import build_database

    path = tmp_path_factory.mktemp("fuzz") / "f.duckdb"
    build_database(DOCS, path)
    b = EmbeddedBackend.open(Path(path), now=dt.datetime(2024, 5, 2, 12, 30))
    yield b
    b.close()


def _esql_ok(b: EmbeddedBackend, query: str, params: list[Any] | None = None) -> dict[str, Any] | None:
    try:
        return b.esql_query(query, params)
    except EsError as exc:
        assert 400 <= exc.status < 600
        assert exc.type and isinstance(exc.reason, str)
        if exc.status >= 500:
            pytest.fail(f"internal failure for {query!r}: {exc}")
        return None


def _dsl_ok(b: EmbeddedBackend, index: str, body: Any) -> dict[str, Any] | None:
    try:
        return b.es_search(index, body)
    except EsError as exc:
        assert 400 <= exc.status < 500, f"{body!r} -> {exc}"
        return None


# ---------------------------------------------------------------------------- ES|QL

FIELDS = ["host.name", "process.pid", "process.args", "process.name", "user.name", "@timestamp", "tags",
          "message", "host.ip", "process.command_line", "nope", "`host.name`", "event.category"]  # fmt: skip
LITERALS = ["1", "-2", "3.5", "\"web-01\"", "\"10.0.0.1\"", "\"2024-05-01\"", "null", "true", "false", "[1, 2]",
            "[\"a\", \"b\"]", "1 day", "2 hours", "?"]  # fmt: skip
FUNCS = ["LENGTH", "TO_UPPER", "CONCAT", "COALESCE", "MV_COUNT", "MV_MAX", "TO_STRING", "TO_LONG", "ABS", "ROUND",
         "DATE_TRUNC", "CIDR_MATCH", "CASE", "GREATEST", "SUBSTRING", "TO_IP", "DATE_EXTRACT", "SPLIT",
         "MV_CONCAT", "NOW", "STARTS_WITH", "REPLACE", "FOO"]  # fmt: skip
AGGS = ["COUNT", "COUNT_DISTINCT", "MIN", "MAX", "AVG", "SUM", "MEDIAN", "VALUES", "TOP", "PERCENTILE"]


@st.composite
def expr(draw: st.DrawFn, depth: int = 0) -> str:
    choice = draw(st.integers(0, 9 if depth < 3 else 1))
    if choice == 0:
        return draw(st.sampled_from(FIELDS))
    if choice == 1:
        return draw(st.sampled_from(LITERALS))
    if choice in (2, 3):
        op = draw(st.sampled_from(["+", "-", "*", "/", "%", "==", "!=", "<", ">=", "AND", "OR", "=~"]))
        return f"({draw(expr(depth + 1))} {op} {draw(expr(depth + 1))})"
    if choice == 4:
        return f"NOT {draw(expr(depth + 1))}"
    if choice == 5:
        fn = draw(st.sampled_from(FUNCS))
        args = draw(st.lists(expr(depth + 1), min_size=0, max_size=3))
        return f"{fn}({', '.join(args)})"
    if choice == 6:
        return f"{draw(expr(depth + 1))} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if choice == 7:
        pats = draw(st.lists(st.text(alphabet="ab*?.\\", max_size=4), min_size=1, max_size=2))
        kw = draw(st.sampled_from(["LIKE", "NOT LIKE", "RLIKE"]))
        rendered = ", ".join('"' + p.replace("\\", "\\\\") + '"' for p in pats)
        return f"{draw(expr(depth + 1))} {kw} ({rendered})" if len(pats) > 1 else f"{draw(expr(depth + 1))} {kw} {rendered}"
    if choice == 8:
        items = draw(st.lists(expr(depth + 1), min_size=1, max_size=3))
        return f"{draw(expr(depth + 1))} IN ({', '.join(items)})"
    t = draw(st.sampled_from(["integer", "long", "double", "keyword", "ip", "datetime", "boolean", "bogus"]))
    return f"{draw(expr(depth + 1))}::{t}"


@st.composite
def command(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 10))
    if kind == 0:
        return f"WHERE {draw(expr())}"
    if kind == 1:
        return f"EVAL x{draw(st.integers(0, 3))} = {draw(expr())}"
    if kind == 2:
        agg = draw(st.sampled_from(AGGS))
        arg = "*" if agg == "COUNT" and draw(st.booleans()) else draw(expr())
        extra = ", 2, \"desc\"" if agg == "TOP" else (", 50" if agg == "PERCENTILE" else "")
        by = f" BY {draw(st.sampled_from(FIELDS))}" if draw(st.booleans()) else ""
        where = f" WHERE {draw(expr())}" if draw(st.booleans()) else ""
        return f"STATS a = {agg}({arg}{extra}){where}{by}"
    if kind == 3:
        return f"SORT {draw(expr())} {draw(st.sampled_from(['', 'ASC', 'DESC NULLS FIRST']))}"
    if kind == 4:
        return f"LIMIT {draw(st.integers(-1, 20))}"
    if kind == 5:
        return f"KEEP {draw(st.sampled_from(['host.*', 'process.pid', '*', 'nope*', 'a*', '`host.name`']))}"
    if kind == 6:
        return f"DROP {draw(st.sampled_from(['host.*', 'process.pid', 'nope']))}"
    if kind == 7:
        return f"RENAME {draw(st.sampled_from(FIELDS))} AS renamed"
    if kind == 8:
        return f"MV_EXPAND {draw(st.sampled_from(FIELDS))}"
    if kind == 9:
        return f'DISSECT {draw(st.sampled_from(FIELDS))} "{draw(st.sampled_from(["%{a} %{b}", "%{a}-%{+a}", "x", "%{?s} %{z->}"]))}"'
    return f'GROK {draw(st.sampled_from(FIELDS))} "{draw(st.sampled_from(["%{WORD:w} %{NUMBER:n:int}", "%{IP:ip}", "%{NOPE:x}", "(?<k>a+)"]))}"'


@st.composite
def query(draw: st.DrawFn) -> str:
    src = draw(st.sampled_from([f"FROM {PROC}", f"FROM {CONN}", "FROM logs-*", "FROM logs-*, -logs-zeek*",
                                "FROM nope", "ROW a = 1, b = \"x\"", f"FROM {PROC} METADATA _id, _index"]))  # fmt: skip
    cmds = draw(st.lists(command(), max_size=4))
    return " | ".join([src, *cmds])


@SETTINGS
@given(query())
def test_esql_generated_queries_never_crash(fb: EmbeddedBackend, q: str) -> None:
    res = _esql_ok(fb, q, params=["x"])
    if res is not None:
        assert set(res) >= {"columns", "values", "took", "is_partial"}
        assert all(len(row) == len(res["columns"]) for row in res["values"])
        assert len(res["values"]) <= 1000


ESQL_ALPHABET = string.ascii_letters + string.digits + " |,.()[]\"'`*?=<>!+-/%:@_{}\\\n\t"


@SETTINGS
@given(st.text(alphabet=ESQL_ALPHABET, max_size=80))
def test_esql_random_text_never_crashes(fb: EmbeddedBackend, text: str) -> None:
    _esql_ok(fb, text)


@SETTINGS
@given(st.lists(st.sampled_from(["FROM", "ROW", "WHERE", "EVAL", "STATS", "BY", "SORT", "LIMIT", "KEEP", "DROP",
                                 "|", ",", "(", ")", "=", "==", "AND", "OR", "NOT", "IN", "LIKE", "IS", "NULL",
                                 PROC, "host.name", "process.pid", "1", "\"a\"", "COUNT(*)", "?", "[1,2]", "::"]),
                max_size=14))  # fmt: skip
def test_esql_token_soup_never_crashes(fb: EmbeddedBackend, tokens: list[str]) -> None:
    _esql_ok(fb, " ".join(tokens), params=[1])


@SETTINGS
@given(expr())
def test_three_valued_where_partitions_rows(fb: EmbeddedBackend, e: str) -> None:
    """WHERE c, WHERE NOT c and WHERE c IS NULL split the rows exactly (when c type-checks)."""
    base = f"FROM {PROC} | EVAL __c = {e}"
    parts = []
    warned = False
    for cond in ("__c", "NOT __c", "__c IS NULL"):
        res = _esql_ok(fb, f"{base} | WHERE {cond} | STATS n = COUNT(*)")
        if res is None:
            return
        parts.append(res["values"][0][0])
        warned = warned or bool(res.get("warnings"))
    # a multi-valued condition is null (with a warning) for WHERE c and NOT c, and not null
    if warned:
        assert sum(parts) <= 8
    else:
        assert sum(parts) == 8


# ---------------------------------------------------------------------------- Query DSL

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
                         st.text(max_size=8), st.sampled_from(["host.name", "process.pid", "@timestamp", "now-1d/d",
                                                               "10.0.0.0/8", "*", "a*b", "2024-05-01"]))  # fmt: skip
json_values = st.recursive(json_scalars, lambda kids: st.one_of(st.lists(kids, max_size=3),
                                                                st.dictionaries(st.text(max_size=6), kids, max_size=3)),
                           max_leaves=12)  # fmt: skip

QUERY_TYPES = ["term", "terms", "match", "match_phrase", "range", "exists", "prefix", "wildcard", "regexp", "ids",
               "bool", "query_string", "simple_query_string", "multi_match", "fuzzy", "constant_score", "dis_max",
               "match_all", "nested"]  # fmt: skip
DSL_FIELDS = ["host.name", "process.pid", "process.args", "message", "@timestamp", "host.ip", "tags", "nope",
              "process.name.text", "user.name"]  # fmt: skip


@st.composite
def dsl_query(draw: st.DrawFn, depth: int = 0) -> Any:
    kind = draw(st.sampled_from(QUERY_TYPES if depth < 2 else QUERY_TYPES[:10]))
    f = draw(st.sampled_from(DSL_FIELDS))
    v = draw(json_scalars)
    if kind == "bool":
        clauses = {k: draw(st.lists(dsl_query(depth + 1), max_size=2)) for k in ("must", "filter", "should", "must_not")}
        if draw(st.booleans()):
            clauses["minimum_should_match"] = draw(st.sampled_from([1, 2, -1, "50%", "2<75%"]))
        return {"bool": clauses}
    if kind == "range":
        return {"range": {f: {draw(st.sampled_from(["gt", "gte", "lt", "lte"])): v}}}
    if kind == "terms":
        return {"terms": {f: draw(st.lists(json_scalars, max_size=3))}}
    if kind == "exists":
        return {"exists": {"field": f}}
    if kind == "ids":
        return {"ids": {"values": draw(st.lists(st.text(max_size=4), max_size=3))}}
    if kind in ("query_string", "simple_query_string"):
        return {kind: {"query": draw(st.text(alphabet=ESQL_ALPHABET, max_size=30))}}
    if kind == "multi_match":
        return {"multi_match": {"query": v, "fields": draw(st.lists(st.sampled_from(DSL_FIELDS + ["*", "host.*"]), max_size=2))}}
    if kind == "constant_score":
        return {"constant_score": {"filter": draw(dsl_query(depth + 1))}}
    if kind == "dis_max":
        return {"dis_max": {"queries": draw(st.lists(dsl_query(depth + 1), max_size=2))}}
    if kind == "match_all":
        return {"match_all": {}}
    if kind == "nested":
        return {"nested": {"path": f, "query": {"match_all": {}}}}
    return {kind: {f: v}}


@SETTINGS
@given(dsl_query(), st.sampled_from([PROC, CONN, "logs-*", "*"]))
def test_dsl_generated_queries_never_crash(fb: EmbeddedBackend, q: Any, index: str) -> None:
    res = _dsl_ok(fb, index, {"query": q, "size": 3})
    if res is not None:
        assert res["hits"]["total"]["relation"] == "eq"


@SETTINGS
@given(dsl_query())
def test_must_not_is_the_complement(fb: EmbeddedBackend, q: Any) -> None:
    yes = _dsl_ok(fb, PROC, {"query": q, "size": 0})
    no = _dsl_ok(fb, PROC, {"query": {"bool": {"must_not": [q]}}, "size": 0})
    if yes is None or no is None:
        return
    assert yes["hits"]["total"]["value"] + no["hits"]["total"]["value"] == 8


@SETTINGS
@given(json_values)
def test_dsl_random_json_bodies_never_crash(fb: EmbeddedBackend, body: Any) -> None:
    _dsl_ok(fb, PROC, body if isinstance(body, dict) else {"query": body})


@SETTINGS
@given(st.dictionaries(st.sampled_from(["terms", "date_histogram", "histogram", "range", "cardinality", "avg", "stats",
                                        "top_hits", "filters", "composite", "percentiles", "missing", "bogus"]),
                       st.dictionaries(st.sampled_from(["field", "size", "interval", "fixed_interval", "calendar_interval",
                                                        "ranges", "order", "filters", "sources", "min_doc_count",
                                                        "percents", "missing", "sort"]),
                                       json_values, max_size=3), min_size=1, max_size=1))  # fmt: skip
def test_aggregations_never_crash(fb: EmbeddedBackend, agg: dict[str, Any]) -> None:
    _dsl_ok(fb, PROC, {"size": 0, "aggs": {"a": agg}})

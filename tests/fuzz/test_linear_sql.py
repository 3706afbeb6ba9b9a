"""The SQL generated for an ES|QL or DSL request grows linearly with the request (issue 19):
operands that a translation repeats are bound once, never copied into copies."""

from __future__ import annotations

import datetime as dt
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_data import PROC

from pytest_soclab.store.dsl import Ctx as DslCtx
from pytest_soclab.store.dsl import compile_query
from pytest_soclab.store.embedded import EmbeddedBackend
from pytest_soclab.store.engine import Engine
from pytest_soclab.store.esql.expr import Ctx
from pytest_soclab.store.esql.parser import parse
from pytest_soclab.store.esql.translate import translate

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
ENGINE = Engine.open(None)
# every template uses its operand once in the ES|QL text; several repeat it in their SQL
TEMPLATES = [
    "{x} + 1", "2 * {x}", "{x} - a", "{x} / 3", "{x} % 7", "-({x})", "ABS({x})", "ROUND({x}, 1)",
    "TO_LONG(POW({x}, 1))", "TO_LONG(LOG10({x}))", "GREATEST({x}, a)", "COALESCE({x}, 1)", "MV_MAX({x})",
    "TO_LONG(TO_STRING({x}))", "LENGTH(SUBSTRING(TO_STRING({x}), 1, 2))", "CASE(a > 1, {x}, 0)",
    "TO_INTEGER(SQRT({x}))", "LENGTH(REPEAT(TO_STRING({x}), 2))", "MV_COUNT({x})",
]  # fmt: skip


def sql_size(query: str) -> int:
    ctx = Ctx(token=1, now_sql="TIMESTAMP '2024-05-02 12:30:00'")
    return len(translate(ENGINE, ctx, parse(query)).sql)


@SETTINGS
@given(st.lists(st.sampled_from(TEMPLATES), min_size=1, max_size=14))
def test_esql_sql_is_linear_in_the_expression(chain: list[str]) -> None:
    x = "a"
    for t in chain:
        x = t.format(x=x)
    query = f"ROW a = 5 | EVAL b = {x}"
    # ~400 bytes of SQL per ES|QL byte would already be a blow-up; copies of copies reach megabytes
    assert sql_size(query) <= 2_000 + 60 * len(query), query


def test_esql_sum_of_many_terms_is_linear() -> None:
    sizes = [sql_size("ROW a = " + " + ".join(["1"] * n)) for n in (5, 10, 20, 40)]
    # doubling the terms about doubles the SQL (it used to square it at every term)
    assert all(b < 2.3 * a for a, b in zip(sizes, sizes[1:])), sizes


@st.composite
def dsl(draw: st.DrawFn, depth: int = 0) -> dict:
    kind = draw(st.sampled_from(["term", "range", "exists", "bool", "dis_max", "constant_score"] if depth < 6 else ["term", "range", "exists"]))
    if kind == "term":
        return {"term": {"host.name": draw(st.sampled_from(["web-01", "db-01"]))}}
    if kind == "range":
        return {"range": {"process.pid": {"gte": draw(st.integers(0, 500))}}}
    if kind == "exists":
        return {"exists": {"field": "user.name"}}
    if kind == "constant_score":
        return {"constant_score": {"filter": draw(dsl(depth + 1))}}
    if kind == "dis_max":
        return {"dis_max": {"queries": draw(st.lists(dsl(depth + 1), min_size=1, max_size=3)), "tie_breaker": 0.5}}
    occ = draw(st.sampled_from(["must", "should", "filter", "must_not"]))
    return {"bool": {occ: draw(st.lists(dsl(depth + 1), min_size=1, max_size=3))}}


@SETTINGS
@given(dsl())
def test_dsl_sql_is_linear_in_the_request(fuzz_backend: EmbeddedBackend, query: dict) -> None:
    info = fuzz_backend.engine.catalog.indices[PROC]
    compiled = compile_query(query, DslCtx(info, dt.datetime(2024, 5, 2)))
    size = len(compiled.where) + len(compiled.score)
    # bounded by the nesting (at most 30 levels), never by copies of copies
    assert size <= 500 + 120 * len(json.dumps(query)), query


def test_nested_dis_max_with_tie_breaker_is_linear(fuzz_backend: EmbeddedBackend) -> None:
    info = fuzz_backend.engine.catalog.indices[PROC]
    sizes = []
    for depth in (2, 4, 8, 12):
        q: dict = {"term": {"host.name": "web-01"}}
        for _ in range(depth):
            q = {"dis_max": {"queries": [q, {"exists": {"field": "user.name"}}], "tie_breaker": 0.3}}
        c = compile_query(q, DslCtx(info, dt.datetime(2024, 5, 2)))
        sizes.append(len(c.where) + len(c.score))
    assert sizes[-1] < 12 * sizes[0], sizes  # it tripled at every level

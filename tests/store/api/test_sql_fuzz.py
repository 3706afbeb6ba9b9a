"""Fuzzing POST /_sql's translation: any text or generated SELECT answers rows or a 4xx."""

from __future__ import annotations

import os
import string
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_testdata import PROC

from pytest_soclab.errors import EsError
from pytest_soclab.store.embedded import EmbeddedBackend

pytest.importorskip("sqlglot", reason="the SQL endpoint needs sqlglot (a dependency of the package)")

from pytest_soclab.store.sql import sql_query  # noqa: E402 - after the skip

EXAMPLES = int(os.environ.get("SOCLAB_FUZZ_EXAMPLES", "150"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                    database=None)  # fmt: skip


@pytest.fixture(scope="module")
def fb(store_path: Any) -> Any:
    b = EmbeddedBackend.open(store_path)
    yield b
    b.close()


def _ok(b: EmbeddedBackend, query: str) -> None:
    try:
        sql_query(b, {"query": query, "field_multi_value_leniency": True})
    except EsError as exc:
        if exc.status >= 500:
            pytest.fail(f"internal failure for {query!r}: {exc}")
        assert 400 <= exc.status < 500 and exc.type


COLS = ["host.name", "process.pid", '"@timestamp"', "process.args", "user.name", "nope", "message", "1", "'x'", "NULL",
        "process.name"]  # fmt: skip
FUNCS = ["COUNT", "SUM", "AVG", "MAX", "UPPER", "LENGTH", "YEAR", "HISTOGRAM", "MATCH", "QUERY", "CIDR_MATCH", "CONCAT",
         "SUBSTRING", "DATE_TRUNC", "ROUND", "COALESCE", "FOO"]  # fmt: skip


@st.composite
def sql_expr(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(st.integers(0, 4 if depth < 2 else 0))
    if kind == 0:
        return draw(st.sampled_from(COLS))
    if kind == 1:
        return f"({draw(sql_expr(depth + 1))} {draw(st.sampled_from(['=', '<>', '>', '+', '*', 'AND', 'OR', 'LIKE']))} {draw(sql_expr(depth + 1))})"
    if kind == 2:
        args = draw(st.lists(sql_expr(depth + 1), min_size=0, max_size=3))
        return f"{draw(st.sampled_from(FUNCS))}({', '.join(args)})"
    if kind == 3:
        return f"CAST({draw(sql_expr(depth + 1))} AS {draw(st.sampled_from(['INTEGER', 'DOUBLE', 'VARCHAR', 'DATETIME', 'GEO']))})"
    return f"{draw(sql_expr(depth + 1))} {draw(st.sampled_from(['+', '-']))} INTERVAL {draw(st.integers(-2, 5))} {draw(st.sampled_from(['DAY', 'HOUR', 'FORTNIGHT']))}"


@st.composite
def select(draw: st.DrawFn) -> str:
    items = ", ".join(draw(st.lists(sql_expr(), min_size=1, max_size=3)))
    q = f"SELECT {items} FROM {draw(st.sampled_from([PROC, 'notes', 'logs-*', 'nope']))}"
    if draw(st.booleans()):
        q += f" WHERE {draw(sql_expr())}"
    if draw(st.booleans()):
        q += f" GROUP BY {draw(st.sampled_from(COLS))}"
        if draw(st.booleans()):
            q += f" HAVING {draw(sql_expr())}"
    if draw(st.booleans()):
        q += f" ORDER BY {draw(sql_expr())} {draw(st.sampled_from(['', 'DESC']))}"
    if draw(st.booleans()):
        q += f" LIMIT {draw(st.integers(-1, 20))}"
    return q


@SETTINGS
@given(select())
def test_generated_selects_never_crash(fb: EmbeddedBackend, q: str) -> None:
    _ok(fb, q)


@SETTINGS
@given(st.text(alphabet=string.ascii_letters + string.digits + " ,.()'\"*=<>-+/%;`?@_\n", max_size=60))
def test_random_text_never_crashes(fb: EmbeddedBackend, text: str) -> None:
    _ok(fb, "SELECT " + text)

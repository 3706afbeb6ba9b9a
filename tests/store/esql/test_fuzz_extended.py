"""Fuzzing the newer surface: GROK and DISSECT patterns, date arithmetic and date functions,
INLINE STATS, SAMPLE, CLAMP and LOOKUP JOIN. Whatever the input, the answer is a result or a 4xx in
Elasticsearch's shape; a 5xx or a Python exception is a defect.

SOCLAB_FUZZ_EXAMPLES runs longer (e.g. 2000) than the default quick run."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_testdata import PROC

from pytest_soclab.errors import EsError
from pytest_soclab.store.embedded import EmbeddedBackend

EXAMPLES = int(os.environ.get("SOCLAB_FUZZ_EXAMPLES", "150"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                    database=None)  # fmt: skip


@pytest.fixture(scope="module")
def fb(store_path: Any) -> Any:
    import datetime as dt

    b = EmbeddedBackend.open(store_path, now=dt.datetime(2024, 5, 2, 12, 30))
    yield b
    b.close()


def _ok(b: EmbeddedBackend, query: str) -> dict[str, Any] | None:
    try:
        res = b.esql_query(query)
    except EsError as exc:
        assert exc.type and isinstance(exc.reason, str)
        if exc.status >= 500:
            pytest.fail(f"internal failure for {query!r}: {exc}")
        assert 400 <= exc.status < 500
        return None
    assert all(len(row) == len(res["columns"]) for row in res["values"])
    return res


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


GROK_PIECES = ["%{WORD:w}", "%{NUMBER:n:int}", "%{NUMBER:f:float}", "%{INT:i:long}", "%{IP:ip}", "%{NOTSPACE:s}",
               "%{GREEDYDATA:rest}", "%{WORD:w}", "(?<k>[a-z]+)", "(?<d>\\d+)", "%{NOPE:x}", "%{WORD}", "%{WORD:b:boolean}",
               "%{WORD:t:bogus}", " ", "-", "=", "[", "]", "(", ")", "{", "}", "%{", "\\", ".*", "x", "?", "+"]  # fmt: skip
DISSECT_PIECES = ["%{a}", "%{b}", "%{+a}", "%{?s}", "%{c->}", "%{}", "%{*k}", "%{&k}", "%{+a/2}", " ", "-", ",",
                  "[", "]", "%{", "}", "x", "%%", "\\"]  # fmt: skip
INPUTS = ["process.command_line", "process.args", "message", "host.name", "process.pid", '"1.2.3.4 GET 200"',
          '["a 1", "b 2"]', "null", '"k=v x"']  # fmt: skip


@SETTINGS
@given(st.sampled_from(INPUTS), st.lists(st.sampled_from(GROK_PIECES), min_size=1, max_size=6),
       st.text(max_size=4))  # fmt: skip
def test_grok_patterns_never_crash(fb: EmbeddedBackend, field: str, pieces: list[str], noise: str) -> None:
    src = f"ROW v = {field}" if not field[0].isalpha() else f"FROM {PROC} | EVAL v = {field}"
    _ok(fb, f"{src} | GROK v {_quote(''.join(pieces) + noise)} | LIMIT 5")


@SETTINGS
@given(st.sampled_from(INPUTS), st.lists(st.sampled_from(DISSECT_PIECES), min_size=1, max_size=6),
       st.sampled_from(["", ' APPEND_SEPARATOR=","', " APPEND_SEPARATOR=1", ' BOGUS="x"']))  # fmt: skip
def test_dissect_patterns_never_crash(fb: EmbeddedBackend, field: str, pieces: list[str], option: str) -> None:
    src = f"ROW v = {field}" if not field[0].isalpha() else f"FROM {PROC} | EVAL v = {field}"
    _ok(fb, f"{src} | DISSECT v {_quote(''.join(pieces))}{option} | LIMIT 5")


UNITS = ["year", "years", "quarter", "month", "mo", "week", "w", "day", "d", "hour", "h", "minute", "min", "second",
         "s", "millisecond", "ms", "fortnight"]  # fmt: skip
DATES = ["@timestamp", 'TO_DATETIME("2024-05-01T10:00:00Z")', '"2024-05-01"', "NOW()", '"nope"', "null",
         "process.pid", '"2024-02-29T23:59:59.999Z"::datetime']  # fmt: skip


@st.composite
def span(draw: st.DrawFn) -> str:
    n = draw(st.integers(-3, 400))
    unit = draw(st.sampled_from(UNITS))
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return f"{n} {unit}"
    if kind == 1:
        return f'TO_TIMEDURATION("{n} {unit}")'
    if kind == 2:
        return f'TO_DATEPERIOD("{n} {unit}")'
    return f"({n} {unit} {draw(st.sampled_from(['+', '-']))} {draw(st.integers(0, 9))} {draw(st.sampled_from(UNITS))})"


@st.composite
def date_expr(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(st.integers(0, 6 if depth < 2 else 0))
    if kind == 0:
        return draw(st.sampled_from(DATES))
    if kind in (1, 2):
        return f"({draw(date_expr(depth + 1))} {draw(st.sampled_from(['+', '-']))} {draw(span())})"
    if kind == 3:
        return f"({draw(span())} + {draw(date_expr(depth + 1))})"
    if kind == 4:
        return f"DATE_TRUNC({draw(span())}, {draw(date_expr(depth + 1))})"
    if kind == 5:
        return f'DATE_PARSE({_quote(draw(st.sampled_from(["yyyy-MM-dd", "HH:mm", "yyyy-MM-dd HH:mm:ss", "Q", "x"])))}, {_quote(draw(st.text(max_size=12)))})'
    return f"CLAMP({draw(date_expr(depth + 1))}, {draw(date_expr(depth + 1))}, {draw(date_expr(depth + 1))})"


@st.composite
def date_use(draw: st.DrawFn) -> str:
    e = draw(date_expr())
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return f"EVAL x = {e}"
    if kind == 1:
        return f"WHERE @timestamp > {e}"
    if kind == 2:
        unit = draw(st.sampled_from(["month", "months", "mm", "quarter", "year", "day", "hour", "ms", "nanoseconds", "bogus"]))
        return f'EVAL x = DATE_DIFF("{unit}", {e}, {draw(date_expr())})'
    if kind == 3:
        part = draw(st.sampled_from(["year", "day_of_week", "aligned_week_of_year", "epoch_day", "bogus"]))
        return f'EVAL x = DATE_EXTRACT("{part}", {e})'
    if kind == 4:
        fmt = draw(st.sampled_from(["yyyy-MM-dd", "EEE, MMM d", "HH:mm:ss.SSS Z", "'quoted'", "Q", ""]))
        return f'EVAL x = DATE_FORMAT("{fmt}", {e})'
    return f"STATS c = COUNT(*) BY b = BUCKET({e}, {draw(st.sampled_from(['1 day', '1 hour', '20', '3 months']))})"


@SETTINGS
@given(st.sampled_from([f"FROM {PROC}", "ROW a = 1", f"FROM {PROC} | SORT @timestamp | LIMIT 3"]),
       st.lists(date_use(), min_size=1, max_size=3))  # fmt: skip
def test_date_arithmetic_never_crashes(fb: EmbeddedBackend, src: str, uses: list[str]) -> None:
    _ok(fb, " | ".join([src, *uses]))


AGGS = ["COUNT(*)", "COUNT(process.pid)", "MAX(process.pid)", "MIN(@timestamp)", "VALUES(host.name)", "AVG(process.pid)",
        "SUM(process.pid) WHERE host.name == \"web-01\"", "COUNT_DISTINCT(user.name)", "MAX(nope)", "process.pid",
        "TOP(process.pid, 2, \"desc\")", "MEDIAN(process.args)"]  # fmt: skip
KEYS = ["host.name", "user.name", "process.args", "d = DATE_TRUNC(1 day, @timestamp)", "b = BUCKET(@timestamp, 1 hour)",
        "nope", "process.pid % 2", "tags"]  # fmt: skip


@st.composite
def new_command(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 5))
    if kind == 5:
        index = draw(st.sampled_from(["notes", "nope", "not*", "logs-zeek.conn-default", "notes,notes"]))
        keys = draw(st.lists(st.sampled_from(["title", "host.name", "a0", "views", "process.pid"]), min_size=1, max_size=2))
        return f"LOOKUP JOIN {index} ON {', '.join(keys)}"
    if kind == 0:
        aggs = ", ".join(f"a{i} = {a}" for i, a in enumerate(draw(st.lists(st.sampled_from(AGGS), min_size=1, max_size=3))))
        keys = draw(st.lists(st.sampled_from(KEYS), max_size=2))
        word = draw(st.sampled_from(["INLINE STATS", "INLINESTATS", "inline stats"]))
        return f"{word} {aggs}" + (f" BY {', '.join(keys)}" if keys else "")
    if kind == 1:
        return f"SAMPLE {draw(st.sampled_from(['0.5', '0.01', '0.99', '1', '0', '-0.5', '2', '1e-3']))}"
    if kind == 2:
        args = draw(st.lists(st.sampled_from(["process.pid", "1", "2.5", '"a"', "null", "@timestamp", "host.ip",
                                              "10000000000", "process.args"]), min_size=1, max_size=4))  # fmt: skip
        fn = draw(st.sampled_from(["CLAMP", "CLAMP_MIN", "CLAMP_MAX"]))
        return f"EVAL c = {fn}({', '.join(args)})"
    if kind == 3:
        return f"MV_EXPAND {draw(st.sampled_from(['process.args', 'tags', 'host.ip', 'a0', 'nope']))}"
    return f"SORT {draw(st.sampled_from(['@timestamp', 'a0', 'host.name DESC', 'c']))} | LIMIT {draw(st.integers(0, 5))}"


@SETTINGS
@given(st.lists(new_command(), min_size=1, max_size=4))
def test_new_commands_never_crash(fb: EmbeddedBackend, cmds: list[str]) -> None:
    _ok(fb, " | ".join([f"FROM {PROC}", *cmds]))

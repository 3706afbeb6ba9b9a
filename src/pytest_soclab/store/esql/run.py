"""POST /_query over the embedded store: parse, verify, translate, run, answer like Elasticsearch."""

from __future__ import annotations

import datetime as dt
import math
import time
from typing import Any

import duckdb

from pytest_soclab.errors import EsError, illegal_argument

from ..layout import format_date, int_to_ip
from ..limits import out_of_memory
from ..sqlutil import literal
from .expr import Col, Ctx
from .late import fill
from .parser import parse
from .translate import translate

MAX_QUERY_LENGTH = 100_000


def run(engine: Any, query: Any, *, params: list[Any] | None = None, columnar: bool = False,
        late: bool = True) -> dict[str, Any]:
    started = time.perf_counter()
    if not isinstance(query, str):
        raise illegal_argument("[query] must be a string")
    if len(query) > MAX_QUERY_LENGTH:
        raise EsError(400, "parsing_exception", f"ES|QL statement is too large [{len(query)} characters > {MAX_QUERY_LENGTH}]")
    if params is not None and not isinstance(params, list):
        raise illegal_argument("[params] must be an array")
    tree = parse(query)
    out, ctx, rows, fired, warn_values = _execute(engine, tree, params, late=late)
    keys: list[tuple[int, int]] = []
    if out.late:  # the SQL ends each row with its (index, document): the rest is read from sources
        keys = [(r[-2], r[-1]) for r in rows]
        rows = [r[:-2] for r in rows]
    if out.selected is not None:  # constant-NULL columns the SQL left out
        width = len(out.cols)
        full = []
        for row in rows:
            filled: list[Any] = [None] * width
            for i, v in zip(out.selected, row):
                filled[i] = v
            full.append(tuple(filled))
        rows = full
    columns = [{"name": c.name, "type": c.type} for c in out.cols]
    if out.late:  # late columns are filled below: render the others only
        shown = [(i, c) for i, c in enumerate(out.cols) if i not in out.late]
        values = []
        for row in rows:
            vals: list[Any] = [None] * len(out.cols)
            for i, c in shown:
                vals[i] = _render(c, row[i])
            values.append(vals)
    else:
        values = [[_render(c, v) for c, v in zip(out.cols, row)] for row in rows]
    if not out.cols:
        values = [[] for _ in rows]
    if out.late and not fill(engine, out.late_sources, out.late, keys, values):
        return run(engine, query, params=params, columnar=columnar, late=False)
    if columnar:
        values = [list(col) for col in zip(*values)] if values else [[] for _ in out.cols]
    result: dict[str, Any] = {
        "took": max(0, int((time.perf_counter() - started) * 1000)),
        "is_partial": False,
        "columns": columns,
        "values": values,
    }
    warnings = []
    for wid in sorted(fired):
        pos, text, message = ctx.warnings[wid]
        warnings.append(
            f"Line {pos.line}:{pos.col}: evaluation of [{text}] failed, treating result as null. "
            f"Only first 20 failures recorded."
        )
        if "{}" in message:
            message = message.replace("{}", warn_values.get(wid, ""))
        warnings.append(f"Line {pos.line}:{pos.col}: {message}")
    if warnings:
        result["warnings"] = warnings
    return result


def _execute(engine: Any, tree: Any, params: list[Any] | None, *, late: bool) -> tuple[Any, Ctx, list[tuple[Any, ...]], set[int], dict[int, str]]:
    token = engine.new_token()
    ctx = Ctx(token=token, now_sql=literal(engine.now()), params=params)
    try:
        out = translate(engine, ctx, tree, late=late)
        try:
            rows = engine.query(out.sql)
        except duckdb.Error as exc:
            raise _runtime_error(exc) from None
        fired = engine.take_warnings(token)
        warn_values = engine.take_warning_values(token)
    finally:
        engine.take_warnings(token)
        engine.take_warning_values(token)
    return out, ctx, rows, fired, warn_values


def _runtime_error(exc: duckdb.Error) -> EsError:
    if isinstance(exc, duckdb.OutOfMemoryException):
        return out_of_memory(exc)
    msg = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())[:500]
    if isinstance(exc, (duckdb.InvalidInputException, duckdb.ConversionException, duckdb.OutOfRangeException)):
        return EsError(400, "illegal_argument_exception", f"query evaluation failed: {msg}")
    return EsError(500, "esql_illegal_state_exception", f"the embedded store could not run this query: {msg}")


def _render(col: Col, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, list):
        items = [_scalar(col.type, v) for v in value if v is not None]
        if not items:
            return None
        return items[0] if len(items) == 1 else items
    return _scalar(col.type, value)


def _scalar(t: str, value: Any) -> Any:
    if value is None:
        return None
    if t in ("date", "date_nanos"):
        if isinstance(value, dt.datetime):
            return format_date(value)
        return value
    if t == "ip":
        return int_to_ip(int(value))
    if t == "double":
        f = float(value)
        return None if math.isnan(f) or math.isinf(f) else f
    if t in ("integer", "long", "unsigned_long"):
        return int(value)
    if t in ("unsupported",):
        return None
    if t == "null":
        return None
    if isinstance(value, dt.datetime):
        return format_date(value)
    return value

"""ES|QL literals and query parameters (`?`, `?1`, `?name`) as typed SQL expressions."""

from __future__ import annotations

from typing import Any

from pytest_soclab.errors import parsing_exception

from ..sqlutil import literal
from . import ast as A
from .expr import TE, Ctx, lit
from .types import span_sql


def literal_expr(node: A.Literal) -> TE:
    t = node.type
    if t in ("date_period", "time_duration"):
        return TE(span_sql(node.value), t, const=True, value=node.value)
    if isinstance(node.value, list):
        vals = [v for v in node.value if v is not None]
        if not vals:
            return TE("NULL", "null", const=True, value=None)
        if t == "integer":
            sql = "[" + ", ".join(f"({v})::INTEGER" for v in vals) + "]"
        elif t == "long":
            sql = "[" + ", ".join(f"({v})::BIGINT" for v in vals) + "]"
        else:
            sql = literal(vals)
        if len(vals) == 1:
            return lit(vals[0], t)
        return TE(sql, t, multi=True, const=True, value=vals)
    return lit(node.value, t)


def param_expr(ctx: Ctx, node: A.Param) -> TE:
    params = ctx.params
    if params is None:
        raise parsing_exception(f"{node.pos}: Unknown query parameter [{node.name or '?'}]")
    value: Any
    if node.name == "":
        idx = ctx.next_param
        ctx.next_param += 1
        if idx >= len(params):
            raise parsing_exception(f"{node.pos}: Not enough actual parameters {len(params)}")
        value = _param_value(params[idx])
    elif node.name.isdigit():
        idx = int(node.name) - 1
        if idx < 0 or idx >= len(params):
            raise parsing_exception(f"{node.pos}: No parameter is defined for position {node.name}, did you mean any position between 1 and {len(params)}?")
        value = _param_value(params[idx])
    else:
        named = {}
        for p in params:
            if isinstance(p, dict):
                named.update(p)
        if node.name not in named:
            raise parsing_exception(f"{node.pos}: Unknown query parameter [{node.name}]" + (f", did you mean any of {sorted(named)}?" if named else ""))
        value = _param_value(named[node.name])
    if isinstance(value, dict):
        raise parsing_exception(f"{node.pos}: Unsupported parameter value {value!r}")
    if isinstance(value, bool):
        return lit(value, "boolean")
    if isinstance(value, int):
        return lit(value, "integer" if -(2**31) <= value < 2**31 else "long")
    if isinstance(value, float):
        return lit(value, "double")
    if isinstance(value, str):
        return lit(value, "keyword")
    if value is None:
        return lit(None, "null")
    if isinstance(value, list):
        return literal_expr(A.Literal(node.pos, node.text, value, _list_type(value)))
    raise parsing_exception(f"{node.pos}: Unsupported parameter value {value!r}")


def _param_value(p: Any) -> Any:
    if isinstance(p, dict) and len(p) == 1 and "value" in p:
        return p["value"]
    return p


def _list_type(values: list[Any]) -> str:
    vals = [v for v in values if v is not None]
    if all(isinstance(v, bool) for v in vals):
        return "boolean"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return "long" if any(abs(v) >= 2**31 for v in vals) else "integer"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return "double"
    return "keyword"

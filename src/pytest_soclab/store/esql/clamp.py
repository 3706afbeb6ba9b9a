"""CLAMP, CLAMP_MIN and CLAMP_MAX: a value held between bounds, typed as the reference's tables
give (a double anywhere makes a double; an integer takes the other side's type; otherwise the
bounds' type)."""

from __future__ import annotations

from . import ast as A
from .expr import TE, Ctx, ordinal, sv
from .functions import Fn
from .types import NUMERIC, SQL

_ORDERED = NUMERIC + ("keyword", "text", "date", "date_nanos", "ip", "version", "boolean")


def _result(field: str, bound: str) -> str | None:
    if field in NUMERIC and bound in NUMERIC:
        if "double" in (field, bound):
            return "double"
        if field == "integer":
            return bound
        if bound == "integer":
            return field
        return bound
    if field in ("keyword", "text") and bound in ("keyword", "text"):
        return "keyword"
    return field if field == bound else None


def _clamp(kind: str) -> Fn:
    def build(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
        args = [sv(ctx, a, call) for a in args]
        field, bounds = args[0], args[1:]
        t = field.type
        for i, b in enumerate(bounds, 1):
            if field.type not in _ORDERED + ("null",):
                return ctx.problem(call.pos, f"first argument of [{call.text}] must be [numeric, keyword, date, ip, "
                                   f"version or boolean], found value [{call.args[0].text}] type [{field.type}]")  # fmt: skip
            if b.type == "null" or t == "null":
                t = t if b.type == "null" else b.type
                continue
            got = _result(t, b.type)
            if got is None:
                return ctx.problem(call.pos, f"{ordinal(i, len(args))}argument of [{call.text}] must be [{t}], "
                                   f"found value [{call.args[i].text}] type [{b.type}]")  # fmt: skip
            t = got
        if t == "null":
            return TE("NULL", "null")
        cast = SQL.get(t, "VARCHAR")
        x = f"({field.sql})::{cast}"
        lo_hi = [f"({b.sql})::{cast}" for b in bounds]
        if kind == "clamp":
            body = f"least(greatest({x}, {lo_hi[0]}), {lo_hi[1]})"
        elif kind == "min":
            body = f"greatest({x}, {lo_hi[0]})"
        else:
            body = f"least({x}, {lo_hi[0]})"
        nulls = " OR ".join(f"({p}) IS NULL" for p in [x, *lo_hi])
        return TE(f"(CASE WHEN {nulls} THEN NULL ELSE {body} END)", t)

    return Fn(3 if kind == "clamp" else 2, 3 if kind == "clamp" else 2, build)


CLAMPS: dict[str, Fn] = {"CLAMP": _clamp("clamp"), "CLAMP_MIN": _clamp("min"), "CLAMP_MAX": _clamp("max")}

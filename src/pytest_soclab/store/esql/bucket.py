"""The BUCKET grouping function of STATS ... BY: date and numeric buckets, given a span or a number
of buckets over a range (with Elasticsearch's choice of a rounded span)."""

from __future__ import annotations

import datetime as dt
import math

from ..layout import datetime_to_ms, parse_date_ms
from . import ast as A
from .expr import TE, Compile, Ctx, sv
from .functions import trunc_sql
from .types import is_numeric


_DATE_SPANS: list[tuple[int, str, int]] = [
    (1, "millisecond", 1), (1, "second", 1_000), (10, "second", 10_000), (30, "second", 30_000),
    (1, "minute", 60_000), (5, "minute", 300_000), (10, "minute", 600_000), (30, "minute", 1_800_000),
    (1, "hour", 3_600_000), (3, "hour", 10_800_000), (12, "hour", 43_200_000), (1, "day", 86_400_000),
    (1, "week", 604_800_000), (1, "month", 2_629_746_000), (3, "month", 7_889_238_000), (1, "year", 31_556_952_000),
]  # fmt: skip


def bucket(ctx: Ctx, node: A.Call, compile_arg: Compile) -> TE:
    """BUCKET(field, span) or BUCKET(field, n, from, to): the bucket key of each row's value."""
    if len(node.args) not in (2, 4):
        return ctx.problem(node.pos, f"error building [bucket]: expects 2 or 4 arguments")
    args = [compile_arg(a) for a in node.args]
    if any(a.bad for a in args):
        return TE("NULL", "null", bad=True)
    field = args[0]
    if field.type not in ("date", "date_nanos") and not is_numeric(field.type):
        return ctx.problem(node.pos, f"first argument of [{node.text}] must be [datetime or numeric], found value [{node.args[0].text}] type [{field.type}]")
    x = sv(ctx, field, node)
    if field.type in ("date", "date_nanos"):
        if len(args) == 2:
            span = args[1]
            if span.type not in ("date_period", "time_duration") or not span.const:
                return ctx.problem(node.pos, f"second argument of [{node.text}] must be [date_period or time_duration], found value [{node.args[1].text}] type [{span.type}]")
            if span.value[0] <= 0:
                return ctx.problem(node.pos, "Zero or negative time interval is not supported")
            return TE(trunc_sql(span.value, x.sql), field.type)
        n, lo, hi = args[1], args[2], args[3]
        if not (n.const and isinstance(n.value, int)) or n.value <= 0:
            return ctx.problem(node.pos, f"second argument of [{node.text}] must be a constant positive integer")
        lo_ms, hi_ms = _const_date(lo), _const_date(hi)
        if lo_ms is None or hi_ms is None:
            return ctx.problem(node.pos, f"third and fourth arguments of [{node.text}] must be constant dates")
        span = _pick_date_span(int(n.value), lo_ms, hi_ms)
        return TE(trunc_sql(span, x.sql), field.type)
    if len(args) == 2:
        span = args[1]
        if not span.const or not isinstance(span.value, (int, float)) or span.value <= 0:
            return ctx.problem(node.pos, f"second argument of [{node.text}] must be a constant positive number")
        step = float(span.value)
    else:
        n, lo, hi = args[1], args[2], args[3]
        if not (n.const and isinstance(n.value, int)) or n.value <= 0:
            return ctx.problem(node.pos, f"second argument of [{node.text}] must be a constant positive integer")
        if not (lo.const and hi.const and isinstance(lo.value, (int, float)) and isinstance(hi.value, (int, float))):
            return ctx.problem(node.pos, f"third and fourth arguments of [{node.text}] must be constant numbers")
        step = _nice_step((float(hi.value) - float(lo.value)) / int(n.value))
    return TE(f"(floor(({x.sql})::DOUBLE / {step!r}) * {step!r})", "double")


def _const_date(te: TE) -> int | None:
    if not te.const:
        return None
    if isinstance(te.value, str):
        return parse_date_ms(te.value)
    if isinstance(te.value, dt.datetime):
        return datetime_to_ms(te.value)
    return None


def _pick_date_span(n: int, lo: int, hi: int) -> tuple[int, str]:
    width = max(hi - lo, 1)
    for count, unit, ms in _DATE_SPANS:
        if width / ms <= n:
            return count, unit
    return 1, "year"


def _nice_step(rough: float) -> float:
    if rough <= 0 or not math.isfinite(rough):
        return 1.0
    mag = 10 ** math.floor(math.log10(rough))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= rough:
            return float(m * mag)
    return float(10 * mag)


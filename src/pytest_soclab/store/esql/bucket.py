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


# Elasticsearch's "human" date roundings, coarsest first (below a month, fixed spans from the epoch);
# a range too long for monthly buckets gets yearly ones.
_HUMAN_SPANS: list[tuple[int, str]] = [
    (1, "month"), (1, "week"), (1, "day"), (12, "hour"), (3, "hour"), (1, "hour"), (30, "minute"), (10, "minute"),
    (5, "minute"), (1, "minute"), (30, "second"), (10, "second"), (5, "second"), (1, "second"),
    (100, "millisecond"), (50, "millisecond"), (10, "millisecond"), (1, "millisecond"),
]  # fmt: skip
_UNIT_MS = {"week": 604_800_000, "day": 86_400_000, "hour": 3_600_000, "minute": 60_000, "second": 1_000, "millisecond": 1}
_MONDAY_MS = -259_200_000  # 1969-12-29, the Monday weeks are counted from


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
    """The finest human rounding, going down from a month, whose buckets from the one holding `lo`
    reach `hi` in at most `n` steps (the first that does not ends the search)."""
    chosen = (1, "year")
    for span in _HUMAN_SPANS:
        if not _reaches(span, n, lo, hi):
            break
        chosen = span
    return chosen


def _reaches(span: tuple[int, str], n: int, lo: int, hi: int) -> bool:
    count, unit = span
    if unit == "month":
        start = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=lo)
        months = start.year * 12 + start.month - 1
        # stepping n months from the month holding `lo` must get to `hi`
        end_months = months + n
        end = dt.datetime(end_months // 12, end_months % 12 + 1, 1) if 1 <= end_months // 12 <= 9999 else None
        return end is None or datetime_to_ms(end) >= hi
    step = count * _UNIT_MS[unit]
    origin = _MONDAY_MS if unit == "week" else 0
    first = lo - (lo - origin) % step
    return first + n * step >= hi


def _nice_step(rough: float) -> float:
    """Elasticsearch's numeric span for a target count: the power of ten at or above the exact span,
    or half of it when the exact span is below that half."""
    if rough <= 0 or not math.isfinite(rough):
        return 1.0
    power = 10 ** math.ceil(math.log10(rough))
    return float(power / 2 if rough < power / 2 else power)

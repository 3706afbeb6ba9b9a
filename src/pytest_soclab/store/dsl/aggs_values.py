"""Aggregation values: metric SQL and results, bucket keys, date buckets, empty results."""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Any

from ..datefmt import format_ms
from ..layout import datetime_to_ms, int_to_ip, ip_to_int, ms_to_datetime, parse_date_ms
from ..mappings import DATE_TYPES, FLOAT_TYPES, INTEGER_TYPES
from ..sqlutil import literal, string
from .aggs_parse import CALENDAR, UNIT_MS, AggNode, float_param
from .errors import EsError, bad_request, parsing_exception, unsupported
from .lucene_regex import to_re2


@dataclass
class FieldCol:
    alias: str
    name: str
    type: str  # es type (common across indices)
    family: str  # str | long | double | date | ip | bool
    multi: bool


def family_of(es_type: str) -> str:
    if es_type in INTEGER_TYPES:
        return "long"
    if es_type in FLOAT_TYPES:
        return "double"
    if es_type in DATE_TYPES:
        return "date"
    if es_type == "ip":
        return "ip"
    if es_type == "boolean":
        return "bool"
    return "str"


FAMILY_SQL = {"str": "VARCHAR", "long": "BIGINT", "double": "DOUBLE", "date": "TIMESTAMP", "ip": "UHUGEINT", "bool": "BOOLEAN"}




def known_parents(out: dict[tuple[Any, ...], dict[str, Any]], level: Any, runner: Any) -> set[tuple[Any, ...]]:
    """Parent buckets known so far at this level (so empty sub-results still appear)."""
    n = len(level.keys)
    return {k for k in out if len(k) == n}


def sub_results(node: AggNode, values: dict[str, Any]) -> dict[str, Any]:
    res = {}
    for child in node.children:
        res[child.name] = values.get(child.name, empty_result(child))
    return res


def empty_result(node: AggNode) -> dict[str, Any]:
    t = node.type
    res: dict[str, Any]
    if t in ("terms", "multi_terms"):
        res = {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": []}
    elif t in ("rare_terms",):
        res = {"buckets": []}
    elif t in ("date_histogram", "histogram", "range", "date_range", "ip_range"):
        res = {"buckets": []}
    elif t == "composite":
        res = {"buckets": []}
    elif t in ("filter", "missing", "global"):
        res = {"doc_count": 0}
        res.update(sub_results(node, {}))
    elif t == "filters":
        res = {"buckets": {}}
    elif t in ("sum", "value_count", "cardinality"):
        res = {"value": 0 if t != "sum" else 0.0}
    elif t == "stats":
        res = {"count": 0, "min": None, "max": None, "avg": None, "sum": 0.0}
    elif t == "extended_stats":
        res = {"count": 0, "min": None, "max": None, "avg": None, "sum": 0.0, "sum_of_squares": None,
               "variance": None, "variance_population": None, "variance_sampling": None, "std_deviation": None,
               "std_deviation_population": None, "std_deviation_sampling": None,
               "std_deviation_bounds": {"upper": None, "lower": None, "upper_population": None,
                                        "lower_population": None, "upper_sampling": None, "lower_sampling": None}}  # fmt: skip
    elif t == "percentiles":
        res = {"values": {_pct_key(q): None for q in _percents(node.params)}}
    elif t == "top_hits":
        res = {"hits": {"total": {"value": 0, "relation": "eq"}, "max_score": None, "hits": []}}
    else:
        res = {"value": None}
    if node.meta is not None:
        res["meta"] = node.meta
    return res


def _percents(params: dict[str, Any]) -> list[float]:
    pcts = params.get("percents", [1, 5, 25, 50, 75, 95, 99])
    if not isinstance(pcts, list) or not all(isinstance(x, (int, float)) and 0 <= x <= 100 for x in pcts):
        raise bad_request("[percents] must be numbers between 0 and 100")
    return [float(x) for x in pcts]


def _pct_key(q: float) -> str:
    return repr(float(q))


def _value_expr(col: FieldCol) -> str:
    """Numeric value of a metric field (dates as epoch millis)."""
    return f"epoch_ms({col.alias})::DOUBLE" if col.family == "date" else f"{col.alias}::DOUBLE"


def _check_numeric(node: AggNode, col: FieldCol) -> None:
    if col.family not in ("long", "double", "date", "bool") and node.type not in ("value_count", "cardinality"):
        raise EsError(
            400, "illegal_argument_exception",
            f"Field [{col.name}] of type [{col.type}] is not supported for aggregation [{node.type}]",
        )  # fmt: skip


def metric_selects(node: AggNode, col: FieldCol | None) -> list[str]:
    t = node.type
    if col is None:
        return []
    if t in ("value_count",):
        return [f"sum(len({col.alias}))" if col.multi else f"count({col.alias})"]
    if t == "cardinality":
        return [f"len(list_distinct(flatten(list({col.alias}))))" if col.multi else f"count(DISTINCT {col.alias})"]
    _check_numeric(node, col)
    if col.multi:
        v = f"flatten(list({'list_transform(' + col.alias + ', lambda __x: epoch_ms(__x)::DOUBLE)' if col.family == 'date' else col.alias + '::DOUBLE[]'}))"
        aggs = {
            "min": [f"list_min({v})"], "max": [f"list_max({v})"], "avg": [f"list_avg({v})"],
            "sum": [f"coalesce(list_sum({v}), 0)"],
            "stats": [f"len({v})", f"list_min({v})", f"list_max({v})", f"list_avg({v})", f"coalesce(list_sum({v}), 0)"],
            "extended_stats": [f"len({v})", f"list_min({v})", f"list_max({v})", f"list_avg({v})", f"coalesce(list_sum({v}), 0)",
                               f"list_sum(list_transform({v}, lambda __y: __y * __y))", f"list_var_pop({v})", f"list_var_samp({v})"],
            "percentiles": [f"list_aggregate({v}, 'quantile_cont', {[q / 100 for q in _percents(node.params)]})"],
            "median_absolute_deviation": [f"list_aggregate({v}, 'mad')"],
        }  # fmt: skip
        return aggs[t]
    v = _value_expr(col)
    aggs = {
        "min": [f"min({v})"], "max": [f"max({v})"], "avg": [f"avg({v})"], "sum": [f"coalesce(sum({v}), 0)"],
        "stats": [f"count({v})", f"min({v})", f"max({v})", f"avg({v})", f"coalesce(sum({v}), 0)"],
        "extended_stats": [f"count({v})", f"min({v})", f"max({v})", f"avg({v})", f"coalesce(sum({v}), 0)",
                           f"sum({v} * {v})", f"var_pop({v})", f"var_samp({v})"],
        "percentiles": [f"quantile_cont({v}, {[q / 100 for q in _percents(node.params)]})"],
        "median_absolute_deviation": [f"mad({v})"],
    }  # fmt: skip
    return aggs[t]


def order_metric(node: AggNode, col: FieldCol | None, stat: str) -> str:
    exprs = metric_selects(node, col)
    if not exprs:
        return "NULL"
    if node.type in ("stats", "extended_stats"):
        names = ["count", "min", "max", "avg", "sum"]
        if stat not in names:
            raise EsError(400, "aggregation_execution_exception", f"Invalid aggregation order path [{node.name}.{stat}]")
        return exprs[names.index(stat)]
    if node.type == "percentiles":
        raise unsupported("ordering buckets by a percentiles aggregation")
    return exprs[0]


def as_number(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f


def metric_result(node: AggNode, col: FieldCol | None, vals: Any) -> dict[str, Any]:
    t = node.type
    if col is None:
        return empty_result(node)
    res: dict[str, Any]
    as_date = col.family == "date"
    fmt = node.params.get("format")
    if t in ("value_count", "cardinality"):
        res = {"value": int(vals[0] or 0)}
    elif t in ("min", "max", "avg", "sum", "median_absolute_deviation"):
        value = as_number(vals[0])
        if t == "sum" and value is None:
            value = 0.0
        res = {"value": value}
        if as_date and value is not None and t in ("min", "max", "avg"):
            res["value_as_string"] = format_ms(int(value), fmt)
    elif t in ("stats", "extended_stats"):
        count = int(vals[0] or 0)
        res = {"count": count, "min": as_number(vals[1]), "max": as_number(vals[2]), "avg": as_number(vals[3]),
               "sum": as_number(vals[4]) or 0.0}  # fmt: skip
        if t == "extended_stats":
            var_pop = as_number(vals[6])
            var_samp = as_number(vals[7])
            sd = math.sqrt(var_pop) if var_pop is not None else None
            sds = math.sqrt(var_samp) if var_samp is not None else None
            avg = res["avg"]
            sigma = float_param(node.params, "sigma", 2.0)
            res.update({
                "sum_of_squares": as_number(vals[5]), "variance": var_pop, "variance_population": var_pop,
                "variance_sampling": var_samp, "std_deviation": sd, "std_deviation_population": sd,
                "std_deviation_sampling": sds,
                "std_deviation_bounds": {
                    "upper": avg + sigma * sd if avg is not None and sd is not None else None,
                    "lower": avg - sigma * sd if avg is not None and sd is not None else None,
                    "upper_population": avg + sigma * sd if avg is not None and sd is not None else None,
                    "lower_population": avg - sigma * sd if avg is not None and sd is not None else None,
                    "upper_sampling": avg + sigma * sds if avg is not None and sds is not None else None,
                    "lower_sampling": avg - sigma * sds if avg is not None and sds is not None else None,
                },
            })  # fmt: skip
        if as_date and count:
            for k in ("min", "max", "avg"):
                if res[k] is not None:
                    res[f"{k}_as_string"] = format_ms(int(res[k]), fmt)
    elif t == "percentiles":
        pcts = _percents(node.params)
        got = vals[0] or [None] * len(pcts)
        values = {_pct_key(q): as_number(v) for q, v in zip(pcts, got)}
        if node.params.get("keyed", True) is False:
            res = {"values": [{"key": float(q), "value": values[_pct_key(q)]} for q in pcts]}
        else:
            res = {"values": values}
    else:
        res = {"value": None}
    if node.meta is not None:
        res["meta"] = node.meta
    return res


def render_key(value: Any, col: FieldCol, fmt: str | None) -> dict[str, Any]:
    fam = col.family
    if fam == "date":
        ms = datetime_to_ms(value) if isinstance(value, dt.datetime) else int(value)
        return {"key": ms, "key_as_string": format_ms(ms, fmt)}
    if fam == "ip":
        return {"key": int_to_ip(int(value))}
    if fam == "bool":
        return {"key": 1 if value else 0, "key_as_string": "true" if value else "false"}
    if fam == "long":
        return {"key": int(value)}
    if fam == "double":
        return {"key": float(value)}
    return {"key": value}


def composite_value(value: Any, col: FieldCol | None, stype: str) -> Any:
    if value is None or col is None:
        return None
    if stype == "date_histogram":
        return int(value)
    if stype == "histogram":
        return float(value)
    return render_key(value, col, None)["key"]


def after_key_literal(value: Any, col: FieldCol | None, stype: str) -> str:
    if value is None:
        return "NULL"
    if col is None:
        return string(str(value))
    if stype == "date_histogram":
        return str(int(value))
    if stype == "histogram":
        return literal(float(value))
    return key_literal(_parse_key(value, col), col.family)


def _parse_key(value: Any, col: FieldCol) -> Any:
    if col.family == "ip":
        return ip_to_int(str(value))
    if col.family == "date":
        return ms_to_datetime(int(value))
    if col.family == "bool":
        return bool(value) if not isinstance(value, str) else value == "true"
    return value


def key_literal(value: Any, fam: str) -> str:
    if value is None:
        return "NULL"
    if fam == "ip":
        return f"'{int(value)}'::UHUGEINT"
    if fam == "date":
        if isinstance(value, dt.datetime):
            return literal(value)
        return literal(ms_to_datetime(int(value)))
    if fam == "long":
        return f"{int(value)}::BIGINT"
    if fam == "double":
        return literal(float(value))
    if fam == "bool":
        return "TRUE" if value else "FALSE"
    return literal(value)


def missing_sql(value: Any, col: FieldCol) -> str:
    if col.family == "ip":
        num = ip_to_int(str(value))
        if num is None:
            raise bad_request(f"'{value}' is not an IP string literal.")
        return f"'{num}'::UHUGEINT"
    if col.family == "date":
        ms = parse_date_ms(value)
        if ms is None:
            raise bad_request(f"failed to parse date field [{value}]")
        return literal(ms_to_datetime(ms))
    if col.family in ("long", "double"):
        try:
            return literal(float(value)) if col.family == "double" else literal(int(float(value)))
        except (TypeError, ValueError):
            raise bad_request(f"failed to parse missing value [{value}]") from None
    if col.family == "bool":
        return "TRUE" if str(value).lower() == "true" else "FALSE"
    return string(str(value))


def include_exclude(p: dict[str, Any], col: FieldCol, key: str) -> str:
    conds = []
    for name, neg in (("include", False), ("exclude", True)):
        spec = p.get(name)
        if spec is None:
            continue
        if isinstance(spec, str):
            if col.family != "str":
                raise bad_request(f"Aggregation [{name}] regex only applies to string fields")
            cond = f"regexp_full_match({key}, {string(to_re2(spec))})"
        elif isinstance(spec, list):
            lits = ", ".join(key_literal(_parse_key(v, col), col.family) for v in spec) or "NULL"
            cond = f"{key} IN ({lits})"
        elif isinstance(spec, dict) and "partition" in spec:
            raise unsupported(f"terms [{name}] partitions")
        else:
            raise parsing_exception(f"[{name}] must be a string or an array")
        conds.append(f"NOT coalesce({cond}, FALSE)" if neg else f"coalesce({cond}, FALSE)")
    return " AND ".join(conds)


def date_bucket(p: dict[str, Any], tz: dt.tzinfo | None) -> tuple[Any, tuple[str, Any]]:
    """(SQL expression of a bucket start in epoch ms, step) for date_histogram parameters."""
    cal = p.get("calendar_interval")
    fixed = p.get("fixed_interval")
    legacy = p.get("interval")
    if sum(x is not None for x in (cal, fixed, legacy)) != 1:
        if cal is not None and fixed is not None:
            raise bad_request("Cannot use [fixed_interval] with [calendar_interval] configuration option.")
        raise bad_request("Invalid interval specified, must be non-null and non-empty")
    if legacy is not None:
        if str(legacy) in CALENDAR:
            cal = legacy
        else:
            fixed = legacy
    offset_ms = _parse_duration(str(p.get("offset", "0ms")), allow_sign=True) if p.get("offset") else 0
    tzname = _tz_sql_name(tz)
    if cal is not None:
        unit = CALENDAR.get(str(cal))
        if unit is None:
            raise bad_request(f"The supplied interval [{cal}] could not be parsed as a calendar interval.")

        fixed_off = None
        if isinstance(tz, dt.timezone) and tz != dt.timezone.utc:
            off = tz.utcoffset(None)
            fixed_off = int(off.total_seconds() * 1000) if off else 0

        def expr(x: str, unit: str = unit) -> str:
            if fixed_off is not None:
                shift = fixed_off - offset_ms
                local = f"({x} + to_milliseconds({shift}))"
                return f"(epoch_ms(date_trunc('{unit}', {local})) - ({shift}))"
            if tzname is None:
                inner = f"date_trunc('{unit}', {x} - to_milliseconds({offset_ms})) + to_milliseconds({offset_ms})"
                return f"epoch_ms({inner})"
            local = f"timezone({string(tzname)}, {x}::TIMESTAMPTZ)"
            trunc = f"date_trunc('{unit}', {local} - to_milliseconds({offset_ms})) + to_milliseconds({offset_ms})"
            return f"epoch_ms(timezone({string(tzname)}, {trunc}))"

        return expr, ("calendar", unit)
    assert fixed is not None
    if str(fixed) in ("1M", "1q", "1y", "month", "quarter", "year", "week", "1w") and p.get("fixed_interval") is not None:
        raise bad_request(f"failed to parse setting [date_histogram.fixedInterval] with value [{fixed}] as a time value: unit is missing or unrecognized")
    step_ms = _parse_duration(str(fixed))
    tz_off = 0
    if tz is not None:
        off = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc).astimezone(tz).utcoffset()
        tz_off = int(off.total_seconds() * 1000) if off else 0
    total_off = offset_ms - tz_off

    def fexpr(x: str) -> str:
        return f"((floor((epoch_ms({x}) - {total_off}) / {step_ms}) * {step_ms}) + {total_off})::BIGINT"

    return fexpr, ("fixed", step_ms)


def _tz_sql_name(tz: dt.tzinfo | None) -> str | None:
    if tz is None or tz == dt.timezone.utc:
        return None
    key = getattr(tz, "key", None)
    if key:
        return key
    off = tz.utcoffset(None)
    if off is None:
        return None
    total = int(off.total_seconds() // 60)
    sign = "+" if total >= 0 else "-"
    hh, mm = divmod(abs(total), 60)
    return f"{sign}{hh:02d}:{mm:02d}"


_DURATION = re.compile(r"^([+-]?)(\d+)(ms|s|m|h|d|nanos|micros)$")


def _parse_duration(text: str, allow_sign: bool = False) -> int:
    m = _DURATION.match(text.strip())
    if not m or (m.group(1) and not allow_sign):
        raise bad_request(f"failed to parse setting [interval] with value [{text}] as a time value: unit is missing or unrecognized")
    unit = m.group(3)
    n = int(m.group(2))
    ms = n * UNIT_MS[unit] if unit in UNIT_MS else (n // 1_000_000 if unit == "nanos" else n // 1000)
    if ms <= 0 and not allow_sign:
        raise bad_request(f"[interval] must be positive, got [{text}]")
    return -ms if m.group(1) == "-" else ms


def fill_keys(lo: Any, hi: Any, step: tuple[str, Any], tz: dt.tzinfo | None) -> list[Any]:
    kind, value = step
    keys = []
    if kind == "fixed":
        k = lo
        n = 0
        while k <= hi and n < 100_000:
            keys.append(k)
            k = k + value
            n += 1
        return keys
    cur = ms_to_datetime(int(lo)).replace(tzinfo=dt.timezone.utc)
    if tz is not None:
        cur = cur.astimezone(tz)
    n = 0
    while n < 100_000:
        ms = datetime_to_ms(cur)
        if ms > hi:
            break
        keys.append(ms)
        cur = _calendar_next(cur, value)
        n += 1
    return keys


def _calendar_next(cur: dt.datetime, unit: str) -> dt.datetime:
    if unit == "minute":
        return cur + dt.timedelta(minutes=1)
    if unit == "hour":
        return cur + dt.timedelta(hours=1)
    if unit == "day":
        naive = cur.replace(tzinfo=None) + dt.timedelta(days=1)
        return _relocalize(naive, cur.tzinfo)
    if unit == "week":
        naive = cur.replace(tzinfo=None) + dt.timedelta(days=7)
        return _relocalize(naive, cur.tzinfo)
    months = {"month": 1, "quarter": 3, "year": 12}[unit]
    total = cur.year * 12 + cur.month - 1 + months
    naive = cur.replace(tzinfo=None, year=total // 12, month=total % 12 + 1)
    return _relocalize(naive, cur.tzinfo)


def _relocalize(naive: dt.datetime, tz: dt.tzinfo | None) -> dt.datetime:
    return naive.replace(tzinfo=tz or dt.timezone.utc)


def order_buckets(buckets: list[dict[str, Any]], order: Any) -> list[dict[str, Any]]:
    items = order if isinstance(order, list) else [order]
    for item in reversed(items):
        (path, direction), = item.items()
        rev = str(direction).lower() == "desc"
        if path == "_key":
            buckets = sorted(buckets, key=lambda b: b["key"], reverse=rev)
        elif path == "_count":
            buckets = sorted(buckets, key=lambda b: b["doc_count"], reverse=rev)
        else:
            name, _, stat = path.partition(".")
            buckets = sorted(buckets, key=lambda b: (b.get(name, {}).get(stat or "value") is None,
                                                      b.get(name, {}).get(stat or "value") or 0), reverse=rev)  # fmt: skip
    return buckets


def bound_sql(value: Any, col: FieldCol | None) -> str:
    if value is None:
        return "NULL"
    if col is not None and col.family == "date":
        return literal(ms_to_datetime(int(value)))
    if col is not None and col.family == "ip":
        return f"'{int(value)}'::UHUGEINT"
    return literal(float(value))


def range_bucket(r: dict[str, Any], lo: Any, hi: Any, col: FieldCol | None, kind: str, fmt: str | None) -> dict[str, Any]:
    def show(v: Any) -> str:
        if v is None:
            return "*"
        if col is not None and col.family == "date":
            return format_ms(int(v), fmt)
        if kind == "ip_range" or (col is not None and col.family == "ip"):
            return int_to_ip(int(v))
        return repr(float(v))

    key = r.get("key") or (r["mask"] if "mask" in r else f"{show(lo)}-{show(hi)}")
    b: dict[str, Any] = {"key": key}
    is_date = col is not None and col.family == "date"
    is_ip = kind == "ip_range" or (col is not None and col.family == "ip")
    if lo is not None:
        if is_ip:
            b["from"] = int_to_ip(int(lo))
        else:
            b["from"] = float(lo)
            if is_date:
                b["from_as_string"] = format_ms(int(lo), fmt)
    if hi is not None:
        if is_ip:
            b["to"] = int_to_ip(min(int(hi), 2**128 - 1))
        else:
            b["to"] = float(hi)
            if is_date:
                b["to_as_string"] = format_ms(int(hi), fmt)
    return b


SENTINEL = {
    "str": ("''", "'\U0010ffff'"),
    "long": ("(-9223372036854775808)::BIGINT", "9223372036854775807::BIGINT"),
    "double": ("'-inf'::DOUBLE", "'inf'::DOUBLE"),
    "date": ("TIMESTAMP '0001-01-01'", "TIMESTAMP '9999-12-31'"),
    "ip": ("'0'::UHUGEINT", f"'{2**128 - 1}'::UHUGEINT"),
    "bool": ("FALSE", "TRUE"),
}


def sort_render(value: Any, col: FieldCol | None, desc: bool) -> Any:
    if value is None:
        return None
    if isinstance(value, list):
        value = max(value) if desc else min(value)
    if col is None:
        return value
    if col.family == "date":
        return datetime_to_ms(value)
    if col.family == "ip":
        return int_to_ip(int(value))
    return value

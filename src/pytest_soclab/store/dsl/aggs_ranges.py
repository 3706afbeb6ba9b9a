"""Bucket aggregations over value ranges: histogram, date_histogram, range, date_range, ip_range."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from ..datefmt import DateFormatError, format_ms, parse_timezone
from ..layout import cidr_range, ip_to_int
from ..sqlutil import literal
from .aggs_parse import AggNode, float_param, int_param, number_param
from .aggs_run import Level, Results, Runner
from .aggs_values import (
    FieldCol, bound_sql, date_bucket, fill_keys, known_parents, order_buckets, range_bucket, sub_results,
)
from .datemath import DateMathError, evaluate
from .errors import bad_request, parsing_exception, shard_failure


def agg_date_histogram(run: Runner, node: AggNode, level: Level, out: Results) -> None:
    _histogram(run, node, level, out, dates=True)


def agg_histogram(run: Runner, node: AggNode, level: Level, out: Results) -> None:
    _histogram(run, node, level, out, dates=False)


def _histogram(run: Runner, node: AggNode, level: Level, out: Results, *, dates: bool) -> None:
    p = node.params
    col: FieldCol | None = run.cols.get(id(node))
    allowed = {"field", "interval", "calendar_interval", "fixed_interval", "min_doc_count", "extended_bounds",
               "hard_bounds", "offset", "time_zone", "format", "keyed", "order", "missing"}  # fmt: skip
    for k in p:
        if k not in allowed:
            raise parsing_exception(f"[{node.type}] unknown field [{k}]")
    min_doc = int_param(p, "min_doc_count", 0, minimum=0)
    keyed = bool(p.get("keyed", False))
    if col is None:
        for parent in known_parents(out, level, run) | ({()} if not level.keys else set()):
            out.setdefault(parent, {})[node.name] = {"buckets": {} if keyed else []}
        return
    if dates and col.family != "date":
        raise shard_failure(run.b.plans[0].info.concrete, "illegal_argument_exception",
                            f"Field [{col.name}] of type [{col.type}] is not supported for aggregation [date_histogram]")  # fmt: skip
    if not dates and col.family not in ("long", "double", "date"):
        raise shard_failure(run.b.plans[0].info.concrete, "illegal_argument_exception",
                            f"Field [{col.name}] of type [{col.type}] is not supported for aggregation [histogram]")  # fmt: skip
    key = run.new_key()
    tz = None
    if dates:
        try:
            tz = parse_timezone(str(p["time_zone"])) if p.get("time_zone") else None
        except DateFormatError as exc:
            raise bad_request(str(exc)) from None
        expr_of, step = date_bucket(p, tz)
        fam = "long"
    else:
        interval = p.get("interval")
        try:
            interval = float(interval)
        except (TypeError, ValueError):
            raise bad_request(f"[interval] must be >0 for histogram aggregation [{node.name}]") from None
        if not interval > 0 or not math.isfinite(interval):
            raise bad_request(f"[interval] must be >0 for histogram aggregation [{node.name}]")
        off = float_param(p, "offset", 0.0)
        conv = (lambda x: f"epoch_ms({x})::DOUBLE") if col.family == "date" else (lambda x: f"{x}::DOUBLE")
        expr_of = lambda x, i=interval, o=off, c=conv: f"(floor(({c(x)} - {o!r}) / {i!r}) * {i!r} + {o!r})"  # noqa: E731
        step = ("fixed", interval)
        fam = "double"
    ksql = run.keyed(level, col, key, expr_of)
    hard = p.get("hard_bounds")
    if hard:
        conds = []
        if hard.get("min") is not None:
            conds.append(f"{key} >= {_bound(run, hard['min'], dates, tz)}")
        if hard.get("max") is not None:
            conds.append(f"{key} <= {_bound(run, hard['max'], dates, tz)}")
        if conds:
            ksql = f"SELECT * FROM ({ksql}) WHERE {' AND '.join(conds)}"
    group = ", ".join(level.keys + [key])
    rest, xexprs, slots = run.split_children(node)
    xcols = "".join(f", {e}" for e in xexprs)
    rows = run.query(f"SELECT {group}, count(*){xcols} FROM ({ksql}) GROUP BY {group} ORDER BY {group}")
    nk = len(level.keys)
    counts: dict[tuple[Any, ...], dict[Any, int]] = {}
    for r in rows:
        counts.setdefault(tuple(r[:nk]), {})[r[nk]] = int(r[nk + 1])
    ext = p.get("extended_bounds")
    selected = [tuple(r[: nk + 1]) for r in rows if int(r[nk + 1]) >= max(min_doc, 1)]
    child = run.child_level(level, ksql, [key], level.families[:0] + [fam], selected) if rest else None
    sub = run.eval(rest, child) if child else {}
    for r in rows:
        if slots:
            sub.setdefault(tuple(r[: nk + 1]), {}).update(run.fill_metrics(slots, r[nk + 2 :]))
    fmt = p.get("format")
    for parent in known_parents(out, level, run) | set(counts) | ({()} if not level.keys else set()):
        cmap = counts.get(parent, {})
        keys_all = sorted(cmap)
        if min_doc == 0:
            lo = keys_all[0] if keys_all else None
            hi = keys_all[-1] if keys_all else None
            if ext:
                if ext.get("min") is not None:
                    emin = _bound_value(run, ext["min"], dates, tz, expr_of)
                    lo = emin if lo is None else min(lo, emin)
                if ext.get("max") is not None:
                    emax = _bound_value(run, ext["max"], dates, tz, expr_of)
                    hi = emax if hi is None else max(hi, emax)
            if lo is not None and hi is not None:
                keys_all = fill_keys(lo, hi, step, tz)
        buckets = []
        for k in keys_all:
            cnt = cmap.get(k, 0)
            if cnt < min_doc:
                continue
            if dates:
                b = {"key_as_string": format_ms(int(k), fmt, tz) if fmt or tz else format_ms(int(k)),
                     "key": int(k), "doc_count": cnt}  # fmt: skip
            else:
                kv = float(k)
                b = {"key": kv, "doc_count": cnt}
                if col.family == "date":
                    b = {"key_as_string": format_ms(int(kv), fmt), "key": kv, "doc_count": cnt}
            b.update(sub_results(node, sub.get(parent + (k,), {})))
            buckets.append(b)
        order = p.get("order")
        if order:
            buckets = order_buckets(buckets, order)
        res: dict[str, Any] = {"buckets": {b.get("key_as_string", str(b["key"])): b for b in buckets} if keyed else buckets}
        if node.meta is not None:
            res["meta"] = node.meta
        out.setdefault(parent, {})[node.name] = res


def _bound(run: Runner, value: Any, dates: bool, tz: dt.tzinfo | None) -> str:
    if not dates:
        return literal(number_param(value, "bounds"))
    return str(_date_value(run, value, tz))


def _date_value(run: Runner, value: Any, tz: dt.tzinfo | None) -> int:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    try:
        return evaluate(str(value), run.engine.now(), tz=tz)
    except (DateMathError, DateFormatError):
        raise bad_request(f"failed to parse date field [{value}]") from None


def _bound_value(run: Runner, value: Any, dates: bool, tz: dt.tzinfo | None, expr_of: Any) -> Any:
    if dates:
        ms = _date_value(run, value, tz)
        rows = run.engine.query(f"SELECT {expr_of(f'epoch_ms({ms})')}")
        return rows[0][0]
    rows = run.engine.query(f"SELECT {expr_of(literal(number_param(value, 'extended_bounds')))}")
    return rows[0][0]


def agg_range(run: Runner, node: AggNode, level: Level, out: Results, kind: str = "range") -> None:
    p = node.params
    col: FieldCol | None = run.cols.get(id(node))
    ranges = p.get("ranges")
    if not isinstance(ranges, list) or not ranges:
        raise bad_request(f"No [ranges] specified for the [{node.name}] aggregation")
    keyed = bool(p.get("keyed", False))
    tz = None
    if p.get("time_zone"):
        try:
            tz = parse_timezone(str(p["time_zone"]))
        except DateFormatError as exc:
            raise bad_request(str(exc)) from None
    specs = []
    for i, r in enumerate(ranges):
        if not isinstance(r, dict):
            raise parsing_exception("[ranges] entries must be objects")
        lo, hi = r.get("from"), r.get("to")
        if kind == "ip_range" and "mask" in r:
            bounds = cidr_range(str(r["mask"]))
            if bounds is None:
                raise bad_request(f"[mask] is not a valid CIDR: [{r['mask']}]")
            specs.append((i, r, bounds[0], bounds[1] + 1))
            continue
        specs.append((i, r, _range_bound(run, lo, col, kind, tz), _range_bound(run, hi, col, kind, tz)))
    if col is None:
        for parent in known_parents(out, level, run) | ({()} if not level.keys else set()):
            out.setdefault(parent, {})[node.name] = {"buckets": {} if keyed else []}
        return
    key = run.new_key()
    values = ", ".join(
        f"({i}, {bound_sql(lo, col)}, {bound_sql(hi, col)})" for i, _, lo, hi in specs
    )
    v = "__v"
    src = (f"SELECT __r.*, __u.__v FROM ({level.sql}) __r, unnest(__r.{col.alias}) AS __u(__v)"
           if col.multi else f"SELECT *, {col.alias} AS __v FROM ({level.sql})")  # fmt: skip
    ksql = (
        f"SELECT DISTINCT ON (__d, __i{''.join(', ' + k for k in level.keys)}, __rg.pos) __s0.* EXCLUDE (__v), __rg.pos AS {key} "
        f"FROM ({src}) __s0 JOIN (VALUES {values}) AS __rg(pos, lo, hi) "
        f"ON (__rg.lo IS NULL OR {v} >= __rg.lo) AND (__rg.hi IS NULL OR {v} < __rg.hi)"
    )
    group = ", ".join(level.keys + [key])
    rows = run.query(f"SELECT {group}, count(*) FROM ({ksql}) GROUP BY {group}")
    nk = len(level.keys)
    counts: dict[tuple[Any, ...], dict[int, int]] = {}
    for r in rows:
        counts.setdefault(tuple(r[:nk]), {})[int(r[nk])] = int(r[nk + 1])
    selected = [tuple(r[: nk + 1]) for r in rows]
    child = run.child_level(level, ksql, [key], ["long"], selected) if node.children else None
    sub = run.eval(node.children, child) if child else {}
    for parent in known_parents(out, level, run) | set(counts) | ({()} if not level.keys else set()):
        buckets = []
        for i, r, lo, hi in specs:
            b = range_bucket(r, lo, hi, col, kind, p.get("format"))
            b["doc_count"] = counts.get(parent, {}).get(i, 0)
            b.update(sub_results(node, sub.get(parent + (i,), {})))
            buckets.append(b)
        res = {"buckets": {b["key"]: {k: v for k, v in b.items() if k != "key"} for b in buckets} if keyed else buckets}
        if node.meta is not None:
            res["meta"] = node.meta
        out.setdefault(parent, {})[node.name] = res


def agg_date_range(run: Runner, node: AggNode, level: Level, out: Results) -> None:
    agg_range(run, node, level, out, kind="date_range")


def agg_ip_range(run: Runner, node: AggNode, level: Level, out: Results) -> None:
    agg_range(run, node, level, out, kind="ip_range")


def _range_bound(run: Runner, value: Any, col: FieldCol | None, kind: str, tz: dt.tzinfo | None) -> Any:
    if value is None:
        return None
    if col is not None and col.family == "date":
        return _date_value(run, value, tz)
    if kind == "ip_range" or (col is not None and col.family == "ip"):
        num = ip_to_int(str(value))
        if num is None:
            raise bad_request(f"'{value}' is not an IP string literal.")
        return num
    return number_param(value, "from/to")

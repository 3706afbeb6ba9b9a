"""STATS ... [WHERE] ... BY: grouping keys, aggregate functions and the expressions over them
(BUCKET is in bucket.py)."""

from __future__ import annotations

from . import ast as A
from .expr import TE, Col, sv
from .expressions import compile_expr
from .functions import ANY_ORDERED, NUM, expect
from .state import Rel, State, materialize


def apply_stats(st: State, cmd: A.Stats, rel: Rel) -> Rel:
    rel = materialize(rel)
    ctx = st.ctx
    row_scope = dict(st.scope)
    # 1. grouping keys, evaluated per row (multi-valued keys: one row per value)
    pre_parts: list[str] = []
    groups: list[Col] = []
    multi_groups: list[Col] = []
    ctx.in_stats = True
    try:
        for name, expr in cmd.by:
            if isinstance(expr, A.Call) and expr.name in _AGG_NAMES:
                ctx.problem(expr.pos, f"aggregate function's parameters must be an attribute, literal or a non-aggregation function; found [{expr.text}]")
                continue
            te = compile_expr(st, expr)
            if te.type in ("date_period", "time_duration") and not te.bad:
                ctx.problem(expr.pos, f"grouping key [{expr.text}] has unsupported type [{te.type}]")
            alias = ctx.alias()
            col = Col(name, te.type, alias, False)
            groups = [g for g in groups if g.name != name] + [col]
            pre_parts.append(f"{te.sql} AS {alias}")
            if te.multi:
                multi_groups.append(col)
    finally:
        ctx.in_stats = False
    pre = f"SELECT *{''.join(', ' + p for p in pre_parts)} FROM ({rel.sql}) AS __g0" if pre_parts else rel.sql
    for col in multi_groups:
        a = col.alias
        pre = (
            f"SELECT __p.* REPLACE (__u.__v AS {a}) FROM ({pre}) AS __p, "
            f"unnest(CASE WHEN __p.{a} IS NULL THEN [NULL] ELSE __p.{a} END) AS __u(__v)"
        )
    # 2. aggregate calls, evaluated over the grouped rows
    agg_cols: list[str] = []
    agg_results: dict[int, TE] = {}
    outputs: list[tuple[str, A.Node]] = []
    for name, expr, cond in cmd.aggs:
        calls = [n for n in _walk_aggs(expr)]
        if not calls:
            ctx.problem(expr.pos, f"expected an aggregate function but found [{expr.text}]")
            continue
        filt = None
        if cond is not None:
            fte = compile_expr(st, cond)
            if not fte.bad and fte.type not in ("boolean", "null"):
                ctx.problem(cond.pos, f"Condition expression needs to be boolean, found [{fte.type.upper()}]")
            filt = sv(ctx, fte, cond).sql
        for call in calls:
            te = _agg(st, call, filt)
            alias = ctx.alias()
            agg_cols.append(f"{te.sql} AS {alias}")
            agg_results[id(call)] = TE(alias, te.type, te.multi, bad=te.bad)
        outputs.append((name, expr))
    if ctx.problems:
        return rel
    keys = [g.alias for g in groups]
    select = ", ".join(keys + agg_cols) or "count(*) AS __cnt"
    group_by = f" GROUP BY {', '.join(keys)}" if keys else ""
    inner = f"SELECT {select} FROM ({pre}) AS __g1{group_by}"
    # 3. expressions over aggregates and keys
    st.scope = {g.name: g for g in groups}
    st.agg_results = agg_results
    st.agg_key_scope = True
    out_cols: list[Col] = []
    out_parts: list[str] = []
    try:
        for name, expr in outputs:
            te = compile_expr(st, expr)
            alias = ctx.alias()
            out_cols = [c for c in out_cols if c.name != name] + [Col(name, te.type, alias, te.multi)]
            out_parts.append(f"{te.sql} AS {alias}")
    finally:
        st.agg_results = {}
        st.agg_key_scope = False
    names = {c.name for c in out_cols}
    final_groups = [g for g in groups if g.name not in names]
    del row_scope
    # Groups come out of a parallel hash aggregation in any order: number them by their keys,
    # so that the order without SORT, and SORT's ties, are the same on every run.
    by_keys = ", ".join(f"{k} ASC NULLS LAST" for k in keys)
    number = f"0 AS __idx, (row_number() OVER ({'ORDER BY ' + by_keys if keys else ''}))::BIGINT AS __doc"
    sql = f"SELECT {', '.join(out_parts + keys + [number])} FROM ({inner}) AS __g2"
    return Rel(sql, out_cols + final_groups, ["__doc"], None)


_AGG_NAMES = {
    "COUNT", "COUNT_DISTINCT", "MIN", "MAX", "AVG", "SUM", "MEDIAN", "MEDIAN_ABSOLUTE_DEVIATION", "PERCENTILE",
    "STD_DEV", "VALUES", "TOP", "WEIGHTED_AVG",
}  # fmt: skip


def _walk_aggs(node: A.Node) -> list[A.Call]:
    if isinstance(node, A.Call) and node.name in _AGG_NAMES:
        return [node]
    out: list[A.Call] = []
    for attr in ("left", "right", "expr"):
        child = getattr(node, attr, None)
        if isinstance(child, A.Node):
            out.extend(_walk_aggs(child))
    for child in getattr(node, "args", []) or []:
        out.extend(_walk_aggs(child))
    for child in getattr(node, "items", []) or []:
        out.extend(_walk_aggs(child))
    return out


def _filtered(sql_agg: str, filt: str | None) -> str:
    return sql_agg if filt is None else f"{sql_agg} FILTER (WHERE {filt})"


def _agg(st: State, call: A.Call, filt: str | None) -> TE:
    ctx = st.ctx
    name = call.name
    for a in call.args:
        for inner in _walk_aggs(a):
            return ctx.problem(inner.pos, f"nested aggregations [{inner.text}] not allowed inside other aggregations [{call.text}]")
    if call.star:
        if name != "COUNT":
            return ctx.problem(call.pos, f"Unknown function [{name}(*)]")
        return TE(f"coalesce({_filtered('count(*)', filt)}, 0)", "long")
    arity = {"COUNT": (0, 1), "COUNT_DISTINCT": (1, 2), "PERCENTILE": (2, 2), "TOP": (3, 3), "WEIGHTED_AVG": (2, 2)}
    lo, hi = arity.get(name, (1, 1))
    if not lo <= len(call.args) <= hi:
        return ctx.problem(call.pos, f"error building [{name.lower()}]: expects {'exactly' if lo == hi else 'between ' + str(lo) + ' and'} {hi} argument{'s' if hi != 1 else ''}")
    if name == "COUNT" and not call.args:
        return TE(f"coalesce({_filtered('count(*)', filt)}, 0)", "long")
    args = [compile_expr(st, a) for a in call.args]
    if any(a.bad for a in args):
        return TE("NULL", "null", bad=True)
    x = args[0]
    if x.type == "unsupported" or x.type in ("date_period", "time_duration"):
        return ctx.problem(call.pos, f"argument of [{call.text}] must be [any type except counter types], found value [{call.args[0].text}] type [{x.type}]")
    flat = f"flatten({_filtered(f'list({x.sql})', filt)})" if x.multi else None
    scalar_list = _filtered(f"list({x.sql})", filt)
    values = flat if x.multi else scalar_list
    if name == "COUNT":
        if x.const and x.type != "null" and not x.multi:
            return TE(f"coalesce({_filtered('count(*)', filt)}, 0)", "long")
        sql = f"coalesce({_filtered(f'sum(len({x.sql}))', filt)}, 0)::BIGINT" if x.multi else f"coalesce({_filtered(f'count({x.sql})', filt)}, 0)"
        return TE(sql, "long")
    if name == "COUNT_DISTINCT":
        if x.type in ("geo_point",):
            return ctx.problem(call.pos, f"first argument of [{call.text}] must be [any exact type except counter types], found value [{call.args[0].text}] type [{x.type}]")
        sql = f"len(list_distinct({flat}))::BIGINT" if x.multi else f"coalesce({_filtered(f'count(DISTINCT {x.sql})', filt)}, 0)"
        return TE(sql, "long")
    if name in ("MIN", "MAX"):
        if not expect(ctx, call, 0, x, ANY_ORDERED, "representable except unsigned_long and spatial types"):
            return TE("NULL", x.type, bad=True)
        fn = name.lower()
        sql = f"{_filtered(f'{fn}(list_{fn}({x.sql}))', filt)}" if x.multi else _filtered(f"{fn}({x.sql})", filt)
        return TE(sql, "keyword" if x.type == "text" else x.type)
    if name in ("AVG", "SUM", "MEDIAN", "MEDIAN_ABSOLUTE_DEVIATION", "STD_DEV", "PERCENTILE", "WEIGHTED_AVG"):
        if not expect(ctx, call, 0, x, NUM, "numeric except unsigned_long or counter types"):
            return TE("NULL", "double", bad=True)
    if name == "AVG":
        sql = f"(sum(list_sum({x.sql}::DOUBLE[])) / sum(len({x.sql})))" if x.multi else f"avg(({x.sql})::DOUBLE)"
        if filt:
            sql = f"(sum(list_sum({x.sql}::DOUBLE[])) FILTER (WHERE {filt}) / sum(len({x.sql})) FILTER (WHERE {filt}))" if x.multi else _filtered(f"avg(({x.sql})::DOUBLE)", filt)
        return TE(sql, "double")
    if name == "SUM":
        t = "double" if x.type == "double" else "long"
        cast = "DOUBLE" if t == "double" else "HUGEINT"
        inner = f"sum(list_sum({x.sql}::{cast}[]))" if x.multi else f"sum(({x.sql})::{cast})"
        inner = _filtered(inner, filt)
        if t == "long":
            cond = f"{inner} NOT BETWEEN -9223372036854775808 AND 9223372036854775807"
            return TE(f"(CASE WHEN {ctx.warn_sql(call, cond, 'java.lang.ArithmeticException: long overflow')} THEN NULL ELSE {inner}::BIGINT END)", t)
        return TE(inner, t)
    if name == "MEDIAN":
        return TE(f"list_aggregate({values}::DOUBLE[], 'quantile_cont', 0.5)", "double")
    if name == "PERCENTILE":
        p = args[1]
        if not p.const or not isinstance(p.value, (int, float)):
            return ctx.problem(call.pos, f"second argument of [{call.text}] must be a constant, received [{call.args[1].text}]")
        if not 0 <= float(p.value) <= 100:
            return ctx.problem(call.pos, f"second argument of [{call.text}] must be between 0 and 100, received [{p.value}]")
        return TE(f"list_aggregate({values}::DOUBLE[], 'quantile_cont', {float(p.value) / 100!r})", "double")
    if name == "MEDIAN_ABSOLUTE_DEVIATION":
        return TE(f"list_aggregate({values}::DOUBLE[], 'mad')", "double")
    if name == "STD_DEV":
        return TE(f"list_aggregate({values}::DOUBLE[], 'stddev_pop')", "double")
    if name == "WEIGHTED_AVG":
        w = args[1]
        if not expect(ctx, call, 1, w, NUM, "numeric"):
            return TE("NULL", "double", bad=True)
        xv, wv = sv(ctx, x, call).sql, sv(ctx, w, call).sql
        num = _filtered(f"sum(({xv})::DOUBLE * ({wv})::DOUBLE)", filt)
        den = _filtered(f"sum(CASE WHEN ({xv}) IS NOT NULL THEN ({wv})::DOUBLE END)", filt)
        return TE(f"({num} / nullif({den}, 0))", "double")
    if name == "VALUES":
        sql = f"list_sort(list_distinct({values}))"
        return TE(f"(CASE WHEN len({sql}) = 0 THEN NULL ELSE {sql} END)", "keyword" if x.type == "text" else x.type, multi=True)
    if name == "TOP":
        n, order = args[1], args[2]
        if not n.const or not isinstance(n.value, int) or isinstance(n.value, bool) or n.value <= 0:
            return ctx.problem(call.pos, f"second argument of [{call.text}] must be a constant positive integer, found [{call.args[1].text}]")
        if not order.const or not isinstance(order.value, str) or order.value.upper() not in ("ASC", "DESC"):
            return ctx.problem(call.pos, f"Invalid order value in [{call.text}], expected [ASC, DESC] but got [{call.args[2].text}]")
        if not expect(ctx, call, 0, x, NUM + ("date", "ip", "keyword", "text", "boolean"), "boolean, date, ip, string or numeric except unsigned_long or counter types"):
            return TE("NULL", x.type, bad=True)
        sql = f"list_slice(list_sort(list_filter({values}, lambda __t: __t IS NOT NULL), '{order.value.upper()}'), 1, {n.value})"
        return TE(f"(CASE WHEN len({sql}) = 0 THEN NULL ELSE {sql} END)", "keyword" if x.type == "text" else x.type, multi=True)
    return ctx.problem(call.pos, f"Unknown function [{name}]")

"""ES|QL commands choosing and ordering rows: WHERE, LIMIT, SORT, and MV_EXPAND (a row per value)."""

from __future__ import annotations

from pytest_soclab.errors import parsing_exception

from . import ast as A
from .expr import Col, sv, unknown_column
from .expressions import compile_expr
from .literals import param_expr
from .state import Rel, State, materialize


def apply_where(st: State, cmd: A.Where, rel: Rel) -> Rel:
    te = compile_expr(st, cmd.cond)
    if not te.bad and te.type not in ("boolean", "null"):
        st.ctx.problem(cmd.cond.pos, f"Condition expression needs to be boolean, found [{te.type.upper()}]")
        return rel
    te = sv(st.ctx, te, cmd.cond)
    return Rel(f"SELECT * FROM ({rel.sql}) AS __t WHERE {te.sql}", rel.cols, rel.order, None, rel.ties)


def apply_limit(st: State, cmd: A.Limit, rel: Rel) -> Rel:
    n = cmd.n
    if cmd.param is not None:
        te = param_expr(st.ctx, A.Param(cmd.pos, "?" + cmd.param, cmd.param))
        n = te.value if isinstance(te.value, int) and not isinstance(te.value, bool) else None
        if n is None and not te.bad:
            raise parsing_exception(f"{cmd.pos}: Invalid value for LIMIT [{te.value}], expecting a non negative integer")
    if n is None:
        return rel
    if n < 0:
        raise parsing_exception(f"{cmd.pos}: Invalid value for LIMIT [{n}], expecting a non negative integer")
    if n > 2**31 - 1:
        raise parsing_exception(f"{cmd.pos}: Invalid value for LIMIT [{n}], expecting a non negative integer")
    new_limit = n if rel.limit is None else min(rel.limit, n)
    return Rel(rel.sql, rel.cols, rel.order, new_limit, rel.ties)


def apply_sort(st: State, cmd: A.Sort, rel: Rel) -> Rel:
    rel = materialize(rel)
    exprs = []
    parts = []
    for key in cmd.keys:
        te = compile_expr(st, key.expr)
        if te.type in ("unsupported",) and not te.bad:
            st.ctx.problem(key.expr.pos, f"cannot sort on {te.type}")
        if te.type in ("date_period", "time_duration", "geo_point") and not te.bad:
            st.ctx.problem(key.expr.pos, f"cannot sort on {te.type}")
        alias = st.ctx.alias()
        sql = te.sql
        if te.multi:
            sql = f"list_{'max' if key.desc else 'min'}({sql})"
        exprs.append(f"{sql} AS {alias}")
        nulls_first = key.nulls_first if key.nulls_first is not None else key.desc
        parts.append(f"{alias} {'DESC' if key.desc else 'ASC'} NULLS {'FIRST' if nulls_first else 'LAST'}")
    sql = f"SELECT *, {', '.join(exprs)} FROM ({rel.sql}) AS __s"
    return Rel(sql, rel.cols, parts + rel.ties, None, rel.ties)


def apply_mv_expand(st: State, cmd: A.MvExpand, rel: Rel) -> Rel:
    rel = materialize(rel)
    col = st.scope.get(cmd.field)
    if col is None:
        st.ctx.problem(cmd.field_pos, unknown_column(cmd.field, list(st.scope)))
        return rel
    if not col.multi:
        return rel
    alias = st.ctx.alias()
    new = Col(col.name, col.type, alias, False)
    cols = [new if c.name == col.name else c for c in rel.cols]
    src = col.alias
    pos = st.ctx.alias()
    values = f"CASE WHEN {src} IS NULL THEN [NULL] ELSE {src} END"
    # a select-list unnest keeps rows and values in order; the value's position breaks ties
    sql = f"SELECT *, unnest({values}) AS {alias}, generate_subscripts({values}, 1) AS {pos} FROM ({rel.sql}) AS __x"
    return Rel(sql, cols, rel.order, None, [*rel.ties, pos])

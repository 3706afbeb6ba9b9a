"""ES|QL expressions -> typed SQL: names in scope, operators, functions (scalar, conversion,
CASE, BUCKET inside STATS, full-text predicates prepared by FROM), with ES|QL's verification."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pytest_soclab.errors import EsError, parsing_exception

from ..dsl import to_re2
from ..sqlutil import glob_sql, string
from . import ast as A
from .bucket import bucket
from .clamp import CLAMPS
from .convert import convert
from .expr import TE, as_list, ordinal, sv, unknown_column
from .fulltext import FULLTEXT
from .functions import AGGREGATES, CONVERSIONS, SCALARS, UNSUPPORTED_FUNCTIONS, unify
from .literals import literal_expr, param_expr
from .operators import arith, compare, implicit_cast, overflow_guard
from .state import State
from .types import CAST_NAMES, SQL, is_numeric


# Operand SQL longer than this is bound once instead of copied: the translations of operators and
# functions repeat an operand's SQL (overflow and multi-value guards, CASE templates), and copies of
# copies made the SQL grow exponentially with the nesting (`1 + 1 + ... + 1`). Shorter operands are
# still copied, so the SQL of everyday queries is unchanged.
SHARE_OVER = 160


def compile_expr(st: State, node: A.Node) -> TE:
    """The typed SQL of an expression in the current scope (problems recorded in st.ctx).

    The SQL grows linearly with the expression: a long operand is compiled once and bound to a
    lambda variable around its parent's SQL (`list_transform([operand], lambda v: parent)[1]`),
    so the parent refers to it by name however often its template repeats it."""
    frame: list[tuple[str, str]] = []
    st.frames.append(frame)
    try:
        te = _COMPILERS[type(node)](st, node)
    finally:
        st.frames.pop()
    if frame and not te.bad:
        te = _bind(te, frame)
    if st.frames and len(te.sql) > SHARE_OVER and not te.const and not te.bad:
        name = f"__b{len(st.frames)}_{st.ctx.alias()}"
        st.frames[-1].append((name, te.sql))
        te = replace(te, sql=name)
    return te


def _bind(te: TE, frame: list[tuple[str, str]]) -> TE:
    """The parent's SQL with its bound operands: put back in place where the parent uses one at
    most once (DuckDB binds deep lambda nests slowly), bound by a lambda where it repeats it."""
    sql = te.sql
    wrapped = False
    for name, operand in reversed(frame):
        uses = re.compile(rf"\b{name}\b")
        if len(uses.findall(sql)) <= 1:
            sql = uses.sub(lambda _m, op=operand: op, sql)
            continue
        sql = f"list_transform([{operand}], lambda {name}: {sql})[1]"
        wrapped = True
    return replace(te, sql=f"({sql})" if wrapped else sql)


def _param(st: State, node: A.Param) -> TE:
    return param_expr(st.ctx, node)


def _attr(st: State, node: A.Attr) -> TE:
    col = st.scope.get(node.name)
    if col is None:
        if st.agg_key_scope:
            return st.ctx.problem(node.pos, f"column [{node.name}] must appear in the BY clause or be used in an aggregate function")
        return st.ctx.problem(node.pos, unknown_column(node.name, list(st.scope)))
    if col.type == "unsupported":
        return st.ctx.problem(node.pos, col.origin or f"Cannot use field [{node.name}] with unsupported type")
    return TE(col.alias, col.type, col.multi)


def _logic(st: State, node: A.Logic) -> TE:
    left, right = compile_expr(st, node.left), compile_expr(st, node.right)
    for side, te in (("first", left), ("second", right)):
        if not te.bad and te.type not in ("boolean", "null"):
            st.ctx.problem(node.pos, f"{side} argument of [{node.text}] must be [boolean], found value [{(node.left if side == 'first' else node.right).text}] type [{te.type}]")
            return TE("NULL", "boolean", bad=True)
    left, right = sv(st.ctx, left, node), sv(st.ctx, right, node)
    return TE(f"({left.sql} {node.op} {right.sql})", "boolean", bad=left.bad or right.bad)


def _not(st: State, node: A.Not) -> TE:
    te = compile_expr(st, node.expr)
    if not te.bad and te.type not in ("boolean", "null"):
        return st.ctx.problem(node.pos, f"argument of [{node.text}] must be [boolean], found value [{node.expr.text}] type [{te.type}]")
    te = sv(st.ctx, te, node)
    return TE(f"(NOT {te.sql})", "boolean", bad=te.bad)


def _neg(st: State, node: A.Neg) -> TE:
    te = compile_expr(st, node.expr)
    if te.bad:
        return te
    if te.type in ("date_period", "time_duration"):
        return TE(f"(-{te.sql})", te.type, const=te.const, value=(-te.value[0], te.value[1]) if te.const else None)
    if not is_numeric(te.type) and te.type != "null":
        return st.ctx.problem(node.pos, f"argument of [{node.text}] must be [numeric, date_period or time_duration], found value [{node.expr.text}] type [{te.type}]")
    te = sv(st.ctx, te, node)
    return overflow_guard(st.ctx, node, f"(-({te.sql})::HUGEINT)" if te.type in ("integer", "long") else f"(-{te.sql})", te.type)


def _binop(st: State, node: A.BinOp) -> TE:
    left, right = compile_expr(st, node.left), compile_expr(st, node.right)
    if left.bad or right.bad:
        return TE("NULL", "null", bad=True)
    if node.op in ("+", "-", "*", "/", "%"):
        return arith(st.ctx, node, left, right)
    return compare(st.ctx, node, left, right)


def _inlist(st: State, node: A.InList) -> TE:
    te = compile_expr(st, node.expr)
    items = [implicit_cast(st.ctx, compile_expr(st, i), te, i) for i in node.items]
    if te.bad or any(i.bad for i in items):
        return TE("NULL", "boolean", bad=True)
    for i, it in zip(node.items, items):
        if it.type == "null" or te.type == "null":
            continue
        if not ((is_numeric(te.type) and is_numeric(it.type)) or (te.type in ("keyword", "text") and it.type in ("keyword", "text")) or te.type == it.type):
            return st.ctx.problem(node.pos, f"{ordinal(node.items.index(i) + 1, len(node.items) + 1)}argument of [{node.text}] must be [{te.type}], found value [{i.text}] type [{it.type}]")
    x = sv(st.ctx, te, node)
    vals = [sv(st.ctx, it, node) for it in items]
    sql = f"({x.sql} {'NOT ' if node.negated else ''}IN ({', '.join(v.sql for v in vals)}))"
    return TE(sql, "boolean")


def _isnull(st: State, node: A.IsNull) -> TE:
    te = compile_expr(st, node.expr)
    return TE(f"(({te.sql}) IS {'NOT ' if node.negated else ''}NULL)", "boolean", bad=te.bad)


def _like(st: State, node: A.Like) -> TE:
    te = compile_expr(st, node.expr)
    if te.bad:
        return TE("NULL", "boolean", bad=True)
    if te.type not in ("keyword", "text", "null"):
        return st.ctx.problem(node.pos, f"argument of [{node.text}] must be [string], found value [{node.expr.text}] type [{te.type}]")
    x = sv(st.ctx, te, node)
    conds = []
    for pat in node.patterns:
        if node.rlike:
            try:
                conds.append(f"regexp_full_match({x.sql}, {string(to_re2(pat))})")
            except EsError as exc:
                return st.ctx.problem(node.pos, f"Invalid regex pattern for RLIKE [{pat}]: {exc.reason}")
        else:
            conds.append(glob_sql(x.sql, pat))
    sql = "(" + " OR ".join(conds) + ")"
    if node.negated:
        sql = f"(NOT {sql})"
    return TE(sql, "boolean")


def _cast(st: State, node: A.Cast) -> TE:
    target = CAST_NAMES.get(node.type)
    if target is None:
        raise parsing_exception(f"{node.pos}: Unknown data type named [{node.type}]")
    fn = {
        "integer": "TO_INTEGER", "long": "TO_LONG", "double": "TO_DOUBLE", "keyword": "TO_STRING",
        "boolean": "TO_BOOLEAN", "date": "TO_DATETIME", "ip": "TO_IP", "version": "TO_VERSION",
        "unsigned_long": "TO_UNSIGNED_LONG", "date_nanos": "TO_DATE_NANOS", "date_period": "TO_DATEPERIOD",
        "time_duration": "TO_TIMEDURATION", "geo_point": "TO_GEOPOINT",
    }[target]  # fmt: skip
    call = A.Call(node.pos, node.text, fn, [node.expr])
    return _call(st, call)


def _matchop(st: State, node: A.MatchOp) -> TE:
    ft = st.fulltext.get(id(node))
    if ft is None:
        return st.ctx.problem(node.pos, f"[:] operator is only supported in WHERE commands directly after FROM, on index fields, with a constant query")
    field_te = compile_expr(st, node.field)
    if field_te.bad:
        return field_te
    return TE(ft[0], "boolean")


def _call(st: State, node: A.Call) -> TE:
    done = st.agg_results.get(id(node))
    if done is not None:
        return done
    name = node.name
    if name in AGGREGATES:
        if not st.ctx.in_stats:
            return st.ctx.problem(node.pos, f"aggregate function [{node.text}] not allowed outside STATS command")
        return st.ctx.problem(node.pos, f"nested aggregations [{node.text}] not allowed inside other aggregations")
    if name in FULLTEXT:
        ft = st.fulltext.get(id(node))
        if ft is None:
            if name == "KQL":
                return st.ctx.problem(node.pos, "KQL is not supported by the soclab embedded store")
            return st.ctx.problem(node.pos, f"[{name}] function is only supported in WHERE commands directly after FROM, on index fields, with constant arguments")
        for a in node.args[:1] if name != "QSTR" else []:
            te = compile_expr(st, a)
            if te.bad:
                return te
        return TE(ft[0], "boolean")
    if name == "BUCKET":
        if not st.ctx.in_stats:
            return st.ctx.problem(node.pos, f"grouping function [{node.text}] cannot be used outside the BY clause of STATS")
        return bucket(st.ctx, node, lambda arg: compile_expr(st, arg))
    if name == "CASE":
        return _case(st, node)
    if name in CONVERSIONS:
        return convert(st.ctx, node, lambda arg: compile_expr(st, arg))
    if name in UNSUPPORTED_FUNCTIONS:
        return st.ctx.problem(node.pos, f"function [{name}] is not supported by the soclab embedded store")
    fn = SCALARS.get(name) or CLAMPS.get(name)
    if fn is None:
        return st.ctx.problem(node.pos, f"Unknown function [{node.text.split('(')[0]}]")
    if node.star:
        return st.ctx.problem(node.pos, f"Unknown function [{name}(*)]")
    n = len(node.args)
    if n < fn.min_args or (fn.max_args is not None and n > fn.max_args):
        return st.ctx.problem(node.pos, _arity_message(node, fn.min_args, fn.max_args))
    args = [compile_expr(st, a) for a in node.args]
    if any(a.bad for a in args):
        return TE("NULL", "null", bad=True)
    return fn.build(st.ctx, node, args)


def _case(st: State, node: A.Call) -> TE:
    if len(node.args) < 2:
        return st.ctx.problem(node.pos, f"error building [case]: expects at least two arguments")
    args = [compile_expr(st, a) for a in node.args]
    if any(a.bad for a in args):
        return TE("NULL", "null", bad=True)
    pairs = len(args) // 2
    parts = []
    values = []
    for i in range(pairs):
        cond, val = args[2 * i], args[2 * i + 1]
        if cond.type not in ("boolean", "null"):
            return st.ctx.problem(node.pos, f"{ordinal(2 * i, len(args))}argument of [{node.text}] must be [boolean], found value [{node.args[2 * i].text}] type [{cond.type}]")
        values.append(val)
    if len(args) % 2:
        values.append(args[-1])
    t = unify({v.type for v in values if v.type != "null"})
    if t is None:
        return st.ctx.problem(node.pos, f"all values of [{node.text}] must have the same type")
    multi = any(v.multi for v in values)
    def val_sql(v: TE) -> str:
        if multi:
            return as_list(v)
        return v.sql if v.type == t or v.type == "null" else f"({v.sql})::{SQL[t]}"
    for i in range(pairs):
        cond = sv(st.ctx, args[2 * i], node)
        parts.append(f"WHEN {cond.sql} THEN {val_sql(args[2 * i + 1])}")
    else_sql = val_sql(args[-1]) if len(args) % 2 else "NULL"
    return TE(f"(CASE {' '.join(parts)} ELSE {else_sql} END)", t, multi=multi)


def _arity_message(node: A.Call, lo: int, hi: int | None) -> str:
    n = len(node.args)
    if hi is None:
        return f"error building [{node.name.lower()}]: expects at least {lo} arguments"
    if lo == hi:
        if lo == 0:
            return f"error building [{node.name.lower()}]: expects no arguments"
        return f"error building [{node.name.lower()}]: expects exactly {lo} argument{'s' if lo != 1 else ''}"
    if n < lo:
        return f"error building [{node.name.lower()}]: expects at least {lo} arguments"
    return f"error building [{node.name.lower()}]: expects at most {hi} arguments"


_COMPILERS: dict[type, Callable[[State, Any], TE]] = {
    A.Literal: lambda st, node: literal_expr(node),
    A.Param: _param,
    A.Attr: _attr,
    A.Logic: _logic,
    A.Not: _not,
    A.Neg: _neg,
    A.BinOp: _binop,
    A.InList: _inlist,
    A.IsNull: _isnull,
    A.Like: _like,
    A.Cast: _cast,
    A.MatchOp: _matchop,
    A.Call: _call,
}

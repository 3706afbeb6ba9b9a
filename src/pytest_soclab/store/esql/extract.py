"""ES|QL text extraction: DISSECT and GROK patterns as one regexp_extract struct per command."""

from __future__ import annotations

import duckdb

from ..sqlutil import string
from . import ast as A
from .expr import TE, Col, sv
from .expressions import compile_expr
from .functions import expect
from .patterns import dissect_regex, grok_regex
from .state import Rel, State, materialize


def apply_dissect(st: State, cmd: A.Dissect, rel: Rel) -> Rel:
    rel = materialize(rel)
    te = compile_expr(st, cmd.expr)
    if not expect(st.ctx, _as_call(cmd.expr, "DISSECT"), 0, te, ("keyword", "text"), "string"):
        return rel
    sep = ""
    for key, value in cmd.options.items():
        if key.lower() != "append_separator":
            st.ctx.problem(cmd.pos, f"Invalid option for DISSECT: [{key}]")
            continue
        if not isinstance(value, A.Literal) or not isinstance(value.value, str):
            st.ctx.problem(cmd.pos, f"Invalid value for DISSECT append_separator: expected a string, but was [{getattr(value, 'text', value)}]")
            continue
        sep = value.value
    try:
        regex, names, appends = dissect_regex(cmd.pattern)
    except ValueError as exc:
        st.ctx.problem(cmd.pos, f"Invalid pattern for dissect: [{cmd.pattern}]: {exc}")
        return rel
    problem = _regex_problem(st, regex, len(names))
    if problem:
        st.ctx.problem(cmd.pos, f"Invalid pattern for dissect: [{cmd.pattern}]: {problem}")
        return rel
    return _extract(st, rel, cmd, te, regex, names, appends, sep, {})


def apply_grok(st: State, cmd: A.Grok, rel: Rel) -> Rel:
    rel = materialize(rel)
    te = compile_expr(st, cmd.expr)
    if not expect(st.ctx, _as_call(cmd.expr, "GROK"), 0, te, ("keyword", "text"), "string"):
        return rel
    try:
        regex, names, types = grok_regex(cmd.pattern)
    except ValueError as exc:
        st.ctx.problem(cmd.pos, f"Invalid GROK pattern [{cmd.pattern}]: {exc}")
        return rel
    problem = _regex_problem(st, regex, len(names))
    if problem:
        st.ctx.problem(cmd.pos, f"Invalid GROK pattern [{cmd.pattern}]: {problem}")
        return rel
    return _extract(st, rel, cmd, te, regex, names, {}, "", types, grok=True)


def _regex_problem(st: State, regex: str, n_groups: int) -> str | None:
    """Why the engine's regular expressions (RE2) refuse `regex`, or None: a pattern is
    checked once, here, so that a bad one is the user's 400 and not the engine's failure."""
    try:
        groups = ", ".join(string(f"g{i}") for i in range(n_groups))
        probe = f"regexp_extract('', {string(regex)}, [{groups}])" if n_groups else f"regexp_matches('', {string(regex)})"
        st.engine.query(f"SELECT {probe}")
    except duckdb.Error as exc:
        return str(exc).split(":", 1)[-1].strip().splitlines()[0]
    return None


def _typed(value: str, t: str) -> str:
    if t == "integer":
        return f"TRY_CAST({value} AS INTEGER)"
    if t == "long":
        return f"TRY_CAST({value} AS BIGINT)"
    if t == "double":
        return f"TRY_CAST({value} AS DOUBLE)"
    if t == "boolean":
        return f"(lower({value}) = 'true')"
    return value


def _extract(st: State, rel: Rel, cmd: A.Command, te: TE, regex: str, names: list[str], appends: dict[str, list[str]],
             sep: str, types: dict[str, str], grok: bool = False) -> Rel:  # fmt: skip
    """One column per captured name. A name captured more than once is joined with `sep`
    (DISSECT's append) or, for GROK, becomes a multi-value. A multi-valued input is matched
    value by value (GROK and DISSECT process each value): the outputs are multi-valued."""
    groups = [f"g{i}" for i in range(len(names))]
    out_names: list[str] = []
    for n in names:
        if n not in out_names and n not in ("",):
            out_names.append(n)
    if not out_names:
        return rel
    if te.multi:
        return _extract_multi(st, rel, te, regex, names, groups, out_names, sep, types, grok)
    node = getattr(cmd, "expr")
    src = sv(st.ctx, te, node).sql
    m = f"__m{st.ctx.alias()}"  # one struct column per extracting command
    struct = f"regexp_extract({src}, {string(regex)}, [{', '.join(string(g) for g in groups)}])"
    matched = f"regexp_matches({src}, {string(regex)})"
    cols = list(rel.cols)
    parts = []
    for name in out_names:
        gs = [g for g, n in zip(groups, names) if n == name]
        t = types.get(name, "keyword")
        multi = grok and len(gs) > 1
        if len(gs) == 1:
            value = _typed(f"{m}.{gs[0]}", t)
        elif multi:
            value = "[" + ", ".join(_typed(f"{m}.{g}", t) for g in gs) + "]"
        else:
            value = _typed(f" || {string(sep)} || ".join(f"{m}.{g}" for g in gs), t)
        value = f"CASE WHEN {matched} THEN {value} END"
        alias = st.ctx.alias()
        cols = [c for c in cols if c.name != name] + [Col(name, t, alias, multi)]
        parts.append(f"{value} AS {alias}")
    sql = f"SELECT *, {', '.join(parts)} FROM (SELECT *, {struct} AS {m} FROM ({rel.sql}) AS __d0) AS __d1"
    return Rel(sql, cols, rel.order, None, rel.ties)


def _extract_multi(st: State, rel: Rel, te: TE, regex: str, names: list[str], groups: list[str],
                   out_names: list[str], sep: str, types: dict[str, str], grok: bool) -> Rel:  # fmt: skip
    rx = string(regex)
    m = f"__m{st.ctx.alias()}"
    # the structs of the values that match, in value order
    structs = (f"list_transform(list_filter({te.sql}, lambda __v: regexp_matches(__v, {rx})), "
               f"lambda __v: regexp_extract(__v, {rx}, [{', '.join(string(g) for g in groups)}]))")  # fmt: skip
    cols = list(rel.cols)
    parts = []
    for name in out_names:
        gs = [g for g, n in zip(groups, names) if n == name]
        t = types.get(name, "keyword")
        if len(gs) == 1:
            per = f"list_transform({m}, lambda __s: {_typed('__s.' + gs[0], t)})"
        elif grok:
            per = "flatten(list_transform({m}, lambda __s: [{vals}]))".format(
                m=m, vals=", ".join(_typed(f"__s.{g}", t) for g in gs))
        else:
            per = f"list_transform({m}, lambda __s: {_typed(f' || {string(sep)} || '.join(f'__s.{g}' for g in gs), t)})"
        value = f"(CASE WHEN len({m}) > 0 THEN list_filter({per}, lambda __x: __x IS NOT NULL) END)"
        value = f"(CASE WHEN len({value}) > 0 THEN {value} END)"
        alias = st.ctx.alias()
        cols = [c for c in cols if c.name != name] + [Col(name, t, alias, True)]
        parts.append(f"{value} AS {alias}")
    sql = f"SELECT *, {', '.join(parts)} FROM (SELECT *, {structs} AS {m} FROM ({rel.sql}) AS __d0) AS __d1"
    return Rel(sql, cols, rel.order, None, rel.ties)


def _as_call(expr: A.Node, name: str) -> A.Call:
    return A.Call(expr.pos, f"{name} {expr.text}", name, [expr])

"""ES|QL text extraction: DISSECT and GROK patterns as one regexp_extract struct per command."""

from __future__ import annotations

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
    return _extract(st, rel, cmd, te, regex, names, {}, "", types)


def _extract(st: State, rel: Rel, cmd: A.Command, te: TE, regex: str, names: list[str], appends: dict[str, list[str]],
             sep: str, types: dict[str, str]) -> Rel:  # fmt: skip
    node = getattr(cmd, "expr")
    src = sv(st.ctx, te, node).sql
    groups = [f"g{i}" for i in range(len(names))]
    m = f"__m{st.ctx.alias()}"  # one struct column per extracting command
    struct = f"regexp_extract({src}, {string(regex)}, [{', '.join(string(g) for g in groups)}])"
    matched = f"regexp_matches({src}, {string(regex)})"
    cols = list(rel.cols)
    out_names: list[str] = []
    for n in names:
        if n not in out_names and n not in ("",):
            out_names.append(n)
    parts = []
    for name in out_names:
        gs = [g for g, n in zip(groups, names) if n == name]
        pieces = [f"{m}.{g}" for g in gs]
        if len(pieces) == 1:
            value = f"{m}.{gs[0]}"
        else:
            value = f" || {string(sep)} || ".join(pieces)
        t = types.get(name, "keyword")
        value = f"CASE WHEN {matched} THEN {value} END"
        if t == "integer":
            value = f"TRY_CAST({value} AS INTEGER)"
        elif t == "long":
            value = f"TRY_CAST({value} AS BIGINT)"
        elif t == "double":
            value = f"TRY_CAST({value} AS DOUBLE)"
        elif t == "boolean":
            value = f"(lower({value}) = 'true')"
        alias = st.ctx.alias()
        cols = [c for c in cols if c.name != name] + [Col(name, t, alias, False)]
        parts.append(f"{value} AS {alias}")
    if not parts:
        return rel
    sql = f"SELECT *, {', '.join(parts)} FROM (SELECT *, {struct} AS {m} FROM ({rel.sql}) AS __d0) AS __d1"
    return Rel(sql, cols, rel.order, None, rel.ties)


def _as_call(expr: A.Node, name: str) -> A.Call:
    return A.Call(expr.pos, f"{name} {expr.text}", name, [expr])

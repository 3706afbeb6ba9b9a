"""Full-text functions (MATCH, MATCH_PHRASE, QSTR and the `:` operator) in the WHEREs right after
FROM: each becomes a per-index predicate column compiled with the Query DSL."""

from __future__ import annotations

from typing import Any

from ..catalog import IndexInfo
from ..dsl import Ctx as DslCtx
from ..dsl import compile_query
from . import ast as A
from .literals import param_expr
from .state import State

FULLTEXT = {"MATCH", "MATCH_PHRASE", "QSTR", "KQL"}


def collect_fulltext(st: State, commands: list[A.Command]) -> dict[int, tuple[str, Any]]:
    found: dict[int, tuple[str, Any]] = {}
    allowed_prefix = True
    for cmd in commands:
        if isinstance(cmd, A.Where) and allowed_prefix:
            for node in _walk(cmd.cond):
                dsl = _fulltext_dsl(st, node)
                if dsl is not None:
                    alias = f"__ft{len(found) + 1}"
                    found[id(node)] = (alias, dsl)
                    st.fulltext[id(node)] = (alias, "")
        elif not isinstance(cmd, (A.Sort, A.Limit, A.Where)):
            allowed_prefix = False
    return found


def _fulltext_dsl(st: State, node: A.Node) -> Any:
    if isinstance(node, A.MatchOp):
        if not isinstance(node.field, A.Attr):
            return None
        q = node.query
        value = _const_value(st, q)
        return {"match": {node.field.name: {"query": value}}} if value is not None else None
    if isinstance(node, A.Call) and node.name in FULLTEXT:
        if node.name == "KQL":
            return None
        if node.name == "QSTR":
            if len(node.args) < 1:
                return None
            value = _const_value(st, node.args[0])
            return {"query_string": {"query": value}} if isinstance(value, str) else None
        if len(node.args) < 2 or not isinstance(node.args[0], A.Attr):
            return None
        value = _const_value(st, node.args[1])
        if value is None:
            return None
        kind = "match_phrase" if node.name == "MATCH_PHRASE" else "match"
        body: dict[str, Any] = {"query": value}
        if node.options:
            body.update(node.options)
        return {kind: {node.args[0].name: body}}
    return None


def _const_value(st: State, node: A.Node) -> Any:
    if isinstance(node, A.Literal):
        return node.value
    if isinstance(node, A.Param):
        te = param_expr(st.ctx, node)
        return te.value
    return None


def fulltext_sql(st: State, info: IndexInfo, dsl: Any) -> str:
    return compile_query(dsl, DslCtx.of(st.engine, info, st.engine.now()), False).where


def score_sql(st: State, info: IndexInfo, ft: dict[int, tuple[str, Any]]) -> str:
    if not ft:
        return "0.0"
    parts = []
    for _, (_, dsl) in ft.items():
        c = compile_query(dsl, DslCtx.of(st.engine, info, st.engine.now()), True)
        parts.append(f"CASE WHEN {c.where} THEN {c.score} ELSE 0 END")
    return " + ".join(parts)


def _walk(node: A.Node) -> list[A.Node]:
    out = [node]
    for attr in ("left", "right", "expr", "field", "query"):
        child = getattr(node, attr, None)
        if isinstance(child, A.Node):
            out.extend(_walk(child))
    for attr in ("args", "items"):
        for child in getattr(node, attr, []) or []:
            if isinstance(child, A.Node):
                out.extend(_walk(child))
    return out

"""LOOKUP JOIN index ON key[, key...]: a left outer join of the rows with an index's documents.

Every row is kept; each matching document adds one row (no match: the lookup columns are
null). The index's fields are appended, its key excepted; a field that has the name of an
existing column replaces it. A multi-valued key matches nothing (null, with a warning).

The store has no index modes: any index (not a data stream) serves as a lookup index."""

from __future__ import annotations

from pytest_soclab.errors import EsError

from ..indexexpr import resolve
from ..layout import DOC_COL
from ..sqlutil import ident
from . import ast as A
from .expr import TE, Col, sv
from .sources import from_columns
from .state import Rel, State, materialize
from .types import NUMERIC

_STRINGS = ("keyword", "text")


def _compatible(a: str, b: str) -> bool:
    return a == b or (a in _STRINGS and b in _STRINGS) or (a in NUMERIC and b in NUMERIC)


def apply_lookup_join(st: State, cmd: A.LookupJoin, rel: Rel) -> Rel:
    rel = materialize(rel)
    ctx = st.ctx
    if any(ch in cmd.index for ch in "*,") or ":" in cmd.index:
        ctx.problem(cmd.index_pos, f"invalid index pattern [{cmd.index}]: LOOKUP JOIN takes one index, without wildcards")
        return rel
    try:
        (info,) = resolve(cmd.index, st.engine.catalog.indices.values())
    except EsError:
        ctx.problem(cmd.index_pos, f"Unknown index [{cmd.index}]")
        return rel
    if info.kind == "data_stream":
        ctx.problem(cmd.index_pos, f"invalid [{cmd.index}] resolution in lookup mode to an index in [standard] mode")
        return rel
    right = {name: (t, multi, sqls[0]) for name, t, multi, _, sqls in from_columns(st.engine, [info])}
    conds: list[str] = []
    for key, pos in cmd.keys:
        left = st.scope.get(key)
        if left is None:
            ctx.problem(pos, f"Unknown column [{key}] in left side of join")
            continue
        if key not in right:
            ctx.problem(pos, f"Unknown column [{key}] in right side of join")
            continue
        rtype, rmulti, rsql = right[key]
        if not _compatible(left.type, rtype):
            ctx.problem(pos, f"JOIN left field [{key}] of type [{left.type.upper()}] is incompatible with right field "
                        f"[{key}] of type [{rtype.upper()}]")  # fmt: skip
            continue
        node = A.Attr(pos, key, key)
        lval = sv(ctx, TE(f"__l.{left.alias}", left.type, left.multi), node).sql
        rval = f"__r.k{len(conds)}"
        right_key_sql = rsql if not rmulti else f"(CASE WHEN len({rsql}) = 1 THEN ({rsql})[1] END)"
        right[key] = (rtype, False, right_key_sql)
        conds.append(f"{lval} = {rval}")
    if ctx.problems:
        return rel
    keys = [k for k, _ in cmd.keys]
    added = [(name, spec) for name, spec in right.items() if name not in keys]
    parts: list[str] = [f"{right[k][2]} AS k{i}" for i, k in enumerate(keys)]
    new_cols: list[Col] = []
    for name, (t, multi, sql) in added:
        alias = ctx.alias()
        new_cols.append(Col(name, t, alias, multi))
        parts.append(f"{sql} AS {alias}")
    parts.append(f"{ident(DOC_COL)} AS __rdoc")
    right_sql = f"SELECT {', '.join(parts)} FROM {st.engine.relation(info)}"
    picked = "".join(f", __r.{c.alias}" for c in new_cols)
    sql = f"SELECT __l.*{picked}, __r.__rdoc FROM ({rel.sql}) AS __l LEFT JOIN ({right_sql}) AS __r ON {' AND '.join(conds)}"
    names = {c.name for c in new_cols}
    cols = [c for c in rel.cols if c.name not in names] + new_cols
    ties = [*rel.ties, "__rdoc"]
    return Rel(sql, cols, list(rel.order) or list(rel.ties) + ["__rdoc"], None, ties)

"""ES|QL commands shaping columns: EVAL, KEEP, DROP, RENAME (the last three only change the schema,
as columns carry generated aliases)."""

from __future__ import annotations

import fnmatch
import re

from . import ast as A
from .expr import Col, unknown_column
from .expressions import compile_expr
from .state import Rel, State, materialize


def apply_eval(st: State, cmd: A.Eval, rel: Rel) -> Rel:
    rel = materialize(rel)
    cols = list(rel.cols)
    sql = rel.sql
    # Columns are added in one SELECT until an expression uses a column of the same EVAL, which
    # then needs a level of its own: a level per column made wide EVALs quadratic.
    pending: list[str] = []
    pending_aliases: set[str] = set()
    for name, expr in cmd.fields:
        te = compile_expr(st, expr)
        if te.type in ("date_period", "time_duration") and not te.bad:
            st.ctx.problem(expr.pos, f"EVAL does not support type [{te.type}] as the return data type of expression [{expr.text}]")
        if pending_aliases & set(_ALIAS.findall(te.sql)):
            sql = f"SELECT *, {', '.join(pending)} FROM ({sql}) AS __e"
            pending, pending_aliases = [], set()
        alias = st.ctx.alias()
        col = Col(name, te.type, alias, te.multi)
        cols = [c for c in cols if c.name != name] + [col]
        st.scope[name] = col
        pending.append(f"{te.sql} AS {alias}")
        pending_aliases.add(alias)
    if pending:
        sql = f"SELECT *, {', '.join(pending)} FROM ({sql}) AS __e"
    return Rel(sql, cols, rel.order, None, rel.ties)


_ALIAS = re.compile(r"\bc\d+\b")


def _match_patterns(st: State, cols: list[Col], patterns: list[tuple[str, A.Pos]], verb: str) -> list[tuple[int, Col]]:
    """(winning pattern index, column) for every column some pattern names."""
    chosen: dict[str, tuple[int, int, Col]] = {}
    for pi, (pat, pos) in enumerate(patterns):
        if pat == "*":
            prec = 0
        elif "*" in pat:
            prec = 1
        else:
            prec = 2
        hits = [c for c in cols if (fnmatch.fnmatchcase(c.name, pat) if "*" in pat else c.name == pat)]
        if not hits:
            if "*" in pat:
                st.ctx.problem(pos, f"No matches found for pattern [{pat}]")
            else:
                st.ctx.problem(pos, unknown_column(pat, [c.name for c in cols]))
        for c in hits:
            cur = chosen.get(c.name)
            if cur is None or prec > cur[0] or (prec == cur[0]):
                chosen[c.name] = (prec, pi, c)
    return [(pi, c) for _, pi, c in chosen.values()]


def apply_keep(st: State, cmd: A.Keep, rel: Rel) -> Rel:
    matched = _match_patterns(st, rel.cols, cmd.patterns, "KEEP")
    pos = {c.name: i for i, c in enumerate(rel.cols)}
    matched.sort(key=lambda pc: (pc[0], pos[pc[1].name]))
    return Rel(rel.sql, [c for _, c in matched], rel.order, rel.limit, rel.ties)


def apply_drop(st: State, cmd: A.Drop, rel: Rel) -> Rel:
    matched = {c.name for _, c in _match_patterns(st, rel.cols, cmd.patterns, "DROP")}
    return Rel(rel.sql, [c for c in rel.cols if c.name not in matched], rel.order, rel.limit, rel.ties)


def apply_rename(st: State, cmd: A.Rename, rel: Rel) -> Rel:
    cols = list(rel.cols)
    for old, new, pos in cmd.pairs:
        if "*" in old or "*" in new:
            st.ctx.problem(pos, f"Using wildcards [*] in RENAME is not allowed [{old} AS {new}]")
            continue
        idx = next((i for i, c in enumerate(cols) if c.name == old), None)
        if idx is None:
            st.ctx.problem(pos, unknown_column(old, [c.name for c in cols]))
            continue
        c = cols[idx]
        renamed = Col(new, c.type, c.alias, c.multi, c.origin)
        cols = [x for j, x in enumerate(cols) if x.name != new or j == idx]
        idx = next(i for i, x in enumerate(cols) if x.alias == c.alias)
        cols[idx] = renamed
    return Rel(rel.sql, cols, rel.order, rel.limit, rel.ties)

"""ES|QL syntax tree -> one DuckDB SQL query, verifying names and types on the way.

Each command wraps the previous relation; columns carry generated aliases, so KEEP,
DROP and RENAME only change the schema. Problems are collected and reported together
as a verification_exception, as Elasticsearch does.

This module is the dispatcher: the source command (sources.py), then each processing command
by its type (rows.py, columns.py, stats.py, extract.py), then the final SELECT.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from . import ast as A
from . import columns, extract, inline, lookup, rows
from .expr import Ctx
from .sources import from_source, row_source, show_source
from .state import LAZY, Rel, State, Translated, materialize, raise_problems
from .stats import apply_stats

DEFAULT_LIMIT = 1000
MAX_LIMIT = 10_000
_ALIAS = re.compile(r"\bc\d+\b")


def translate(engine: Any, ctx: Ctx, query: A.Query, *, late: bool = True) -> Translated:
    """One DuckDB SQL query for `query`, or a verification_exception with every problem found.
    `late`: FROM columns may be read from stored sources after the query (esql/late.py)."""
    st = State(engine, ctx, late_ok=late)
    src = query.source
    if isinstance(src, A.From):
        rel = from_source(st, src, query.commands)
    elif isinstance(src, A.Row):
        rel = row_source(st, src)
    else:
        rel = show_source()
    explicit_limit = False
    for cmd in query.commands:
        rel = _command(st, cmd, rel)
        if isinstance(cmd, A.Limit):
            explicit_limit = True
    raise_problems(st.ctx)
    limit = rel.limit if rel.limit is not None else DEFAULT_LIMIT
    limit = min(limit, MAX_LIMIT)
    del explicit_limit
    lazy = st.lazy_nulls
    selected = [i for i, c in enumerate(rel.cols) if c.alias not in lazy]
    late_cols = {i: st.late[c.alias] for i, c in enumerate(rel.cols) if c.alias in st.late}
    names = [rel.cols[i].alias for i in selected] + (["__idx", "__doc"] if late_cols else [])
    select = ", ".join(names) or "NULL AS __none"
    order = f" ORDER BY {', '.join(rel.order)}" if rel.order else ""
    sql = f"SELECT {select} FROM ({rel.sql}) AS __final{order} LIMIT {limit}"
    if not lazy:
        return Translated(sql.replace(LAZY, ""), rel.cols)
    used = sorted(set(_ALIAS.findall(sql.replace(LAZY, ""))) & lazy.keys(), key=lambda a: int(a[1:]))
    sql = sql.replace(LAZY, "".join(f", {lazy[a]} AS {a}" for a in used))
    return Translated(sql, rel.cols, None if len(selected) == len(rel.cols) else selected, late_cols,
                      st.late_sources if late_cols else [])  # fmt: skip


def _command(st: State, cmd: A.Command, rel: Rel) -> Rel:
    if not isinstance(cmd, (A.Limit, A.Keep, A.Drop, A.Rename)):
        rel = materialize(rel)
    st.scope = {c.name: c for c in rel.cols}
    handler = COMMANDS.get(type(cmd))
    if isinstance(cmd, A.Unsupported) or handler is None:
        st.ctx.problem(cmd.pos, f"{cmd.name} is not supported by the soclab embedded store")
        return rel
    return handler(st, cmd, rel)


COMMANDS: dict[type, Callable[[State, Any, Rel], Rel]] = {
    A.Where: rows.apply_where,
    A.Limit: rows.apply_limit,
    A.Sort: rows.apply_sort,
    A.MvExpand: rows.apply_mv_expand,
    A.Eval: columns.apply_eval,
    A.Keep: columns.apply_keep,
    A.Drop: columns.apply_drop,
    A.Rename: columns.apply_rename,
    A.Stats: apply_stats,
    A.Dissect: extract.apply_dissect,
    A.Grok: extract.apply_grok,
    A.InlineStats: inline.apply_inline_stats,
    A.Sample: inline.apply_sample,
    A.LookupJoin: lookup.apply_lookup_join,
}

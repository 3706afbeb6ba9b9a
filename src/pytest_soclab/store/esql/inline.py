"""INLINE STATS and SAMPLE.

INLINE STATS is STATS whose result is joined back onto every input row by its grouping keys:
the input columns stay (those a new column names are replaced), then come the aggregates,
then the grouping columns, as STATS orders them. SAMPLE keeps each row with the given
probability."""

from __future__ import annotations

from . import ast as A
from .columns import apply_eval
from .state import Rel, State, materialize
from .stats import apply_stats


def apply_inline_stats(st: State, cmd: A.InlineStats, rel: Rel) -> Rel:
    rel = materialize(rel)
    # the grouping keys as columns of the input rows, so that both sides of the join have them
    # (grouping functions such as BUCKET are allowed there, as in STATS ... BY)
    st.ctx.in_stats = True
    try:
        keyed = apply_eval(st, A.Eval(cmd.pos, "EVAL", list(cmd.by)), rel) if cmd.by else rel
    finally:
        st.ctx.in_stats = False
    st.scope = {c.name: c for c in keyed.cols}
    by_names = [name for name, _ in cmd.by]
    stats_cmd = A.Stats(cmd.pos, "STATS", cmd.aggs, [(n, A.Attr(cmd.pos, n, n)) for n in by_names])
    grouped = apply_stats(st, stats_cmd, keyed)
    if st.ctx.problems:
        return rel
    agg_cols = [c for c in grouped.cols if c.name not in by_names]
    left_keys = {c.name: c.alias for c in keyed.cols if c.name in by_names}
    right_keys = {c.name: c.alias for c in grouped.cols if c.name in by_names}
    on = " AND ".join(f"__in.{left_keys[n]} IS NOT DISTINCT FROM __st.{right_keys[n]}" for n in by_names) or "TRUE"
    picked = ", ".join(f"__st.{c.alias}" for c in agg_cols)
    sql = f"SELECT __in.*, {picked} FROM ({keyed.sql}) AS __in LEFT JOIN ({grouped.sql}) AS __st ON {on}"
    new_names = {c.name for c in agg_cols} | set(by_names)
    kept = [c for c in keyed.cols if c.name not in new_names]
    groups = [c for c in keyed.cols if c.name in by_names]
    # the input's order: a join keeps none
    ties = list(keyed.ties)
    return Rel(sql, kept + agg_cols + groups, list(keyed.order) or ties, None, ties)


def apply_sample(st: State, cmd: A.Sample, rel: Rel) -> Rel:
    rel = materialize(rel)
    return Rel(f"SELECT * FROM ({rel.sql}) AS __s WHERE random() < {cmd.probability!r}", rel.cols, rel.order, None, rel.ties)

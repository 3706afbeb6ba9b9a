"""ES|QL source commands: FROM (the indices' columns, metadata fields, full-text columns), ROW and
SHOW."""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections.abc import Callable
from importlib.metadata import version as package_version
from typing import Any

from pytest_soclab.errors import EsError

from ..catalog import IndexInfo
from ..indexexpr import resolve
from ..layout import DOC_COL, ID_COL
from ..mappings import esql_type
from ..sqlutil import ident, string
from . import ast as A
from .expr import Col
from .expressions import compile_expr
from .fulltext import collect_fulltext, fulltext_sql, score_sql
from .late import LATE_TYPES, column_paths, late_sources
from .state import LAZY, NO_TIES, Rel, State, raise_problems
from .types import SQL

FromColumn = tuple[str, str, bool, str, tuple[str, ...]]  # name, type, multi, origin, SQL per index


def from_source(st: State, cmd: A.From, commands: list[A.Command]) -> Rel:
    catalog = st.engine.catalog
    infos: list[IndexInfo] = []
    expr = ",".join(p for p, _ in cmd.indices)
    try:
        infos = resolve(expr, catalog.indices.values(), allow_no_indices=False)
    except EsError as exc:
        if exc.type == "index_not_found_exception":
            missing = str(exc.extra.get("index", expr))
            pos = next((p for n, p in cmd.indices if missing in n), cmd.indices[0][1])
            st.ctx.problem(pos, f"Unknown index [{missing}]")
        elif exc.type == "no_such_remote_cluster_exception":
            st.ctx.problem(cmd.indices[0][1], f"Unknown index [{expr}] ({exc.reason}; cross-cluster search is not supported)")
        else:
            raise
    raise_problems(st.ctx)
    # metadata fields
    meta: list[str] = []
    for name, pos in cmd.metadata:
        if name not in ("_index", "_id", "_version", "_score", "_ignored", "_source", "_index_mode"):
            st.ctx.problem(pos, f"unsupported metadata field [{name}]")
        elif name in ("_ignored", "_source", "_index_mode"):
            st.ctx.problem(pos, f"metadata field [{name}] is not supported by the soclab embedded store")
        else:
            meta.append(name)
    # full-text functions in the WHEREs right after FROM become per-index predicate columns
    ft_queries = collect_fulltext(st, commands)
    cols: list[Col] = []
    per_col_sql: list[dict[str, str]] = [dict() for _ in infos]
    needed = needed_columns(commands)
    # every string the pipeline holds: the columns it names are read by the SQL, never late
    named: set[str] | None = None
    late = late_sources(st.engine, infos, commands) if st.late_ok else None
    if late is not None:
        st.late_sources, named = late, set()
        _strings(commands, named)
    for name, t, multi, origin, sqls in from_columns(st.engine, infos):
        if needed is not None and not needed(name):
            continue
        alias = st.ctx.alias()
        cols.append(Col(name, t, alias, multi, origin))
        if sqls[0].startswith("NULL::") and len(set(sqls)) == 1:
            st.lazy_nulls[alias] = sqls[0]
        elif named is not None and t in LATE_TYPES and name not in named:
            st.late[alias] = column_paths(infos, name)
            st.lazy_nulls[alias] = f"NULL::{SQL[t]}{'[]' if multi else ''}"  # never read by the SQL
        for k, sql in enumerate(sqls):
            per_col_sql[k][alias] = sql
    meta_cols: list[Col] = []
    for name in meta:
        t = {"_index": "keyword", "_id": "keyword", "_version": "long", "_score": "double"}[name]
        meta_cols.append(Col(name, t, st.ctx.alias(), False))
    selects = []
    for k, info in enumerate(infos):
        parts = [f"{per_col_sql[k][c.alias]} AS {c.alias}" for c in cols if c.alias not in st.lazy_nulls]
        for mc in meta_cols:
            if mc.name == "_index":
                parts.append(f"{string(info.concrete)} AS {mc.alias}")
            elif mc.name == "_id":
                parts.append(f"{ident(ID_COL)} AS {mc.alias}")
            elif mc.name == "_version":
                parts.append(f"1::BIGINT AS {mc.alias}")
            else:
                parts.append(f"({score_sql(st, info, ft_queries)})::DOUBLE AS {mc.alias}")
        for ft_id, (alias, dsl) in ft_queries.items():
            parts.append(f"coalesce({fulltext_sql(st, info, dsl)}, FALSE) AS {alias}")
        parts.append(f"{k} AS __idx, {ident(DOC_COL)} AS __doc{LAZY}")
        selects.append(f"SELECT {', '.join(parts)} FROM {st.engine.relation(info)}")
    if not selects:
        selects.append(f"SELECT NULL AS __none, {NO_TIES} WHERE FALSE")
    # an index order that holds whatever comes after (documents in time order per index)
    return Rel(" UNION ALL ".join(selects), cols + meta_cols, order=[])


def row_source(st: State, cmd: A.Row) -> Rel:
    st.scope = {}
    parts = []
    cols: list[Col] = []
    for name, expr in cmd.fields:
        te = compile_expr(st, expr)
        if te.type in ("date_period", "time_duration"):
            st.ctx.problem(expr.pos, f"cannot use [{expr.text}] directly in a row assignment")
        alias = st.ctx.alias()
        cols = [c for c in cols if c.name != name]
        col = Col(name, te.type, alias, te.multi)
        cols.append(col)
        st.scope[name] = col
        parts.append(f"{te.sql} AS {alias}")
    return Rel(f"SELECT {', '.join(parts + [NO_TIES])}", cols)


def show_source() -> Rel:
    try:
        ver = package_version("pytest-soclab")
    except Exception:  # noqa: BLE001
        ver = "0"
    cols = [Col("version", "keyword", "c_v", False), Col("date", "keyword", "c_d", False), Col("hash", "keyword", "c_h", False)]
    return Rel(f"SELECT '9.1.0' AS c_v, '2025-01-01' AS c_d, {string('soclab-' + ver)} AS c_h, {NO_TIES}", cols)


# Commands through which a column that no later text names cannot matter (it is never read,
# renamed or matched), up to the first command that replaces the column set.
_TRANSPARENT = (A.Where, A.Eval, A.Sort, A.Limit, A.Drop, A.Rename, A.Dissect, A.Grok, A.MvExpand, A.Sample)


def needed_columns(commands: list[A.Command]) -> Callable[[str], bool] | None:
    """Which FROM columns the pipeline can read, when it ends them with STATS or KEEP: the planner
    spends ~7 ms per query pruning 160 unused columns of a Windows event through the nested
    projections, so they are left out here. None: every column may reach the output."""
    for i, cmd in enumerate(commands):
        if (isinstance(cmd, A.Stats) and not isinstance(cmd, A.InlineStats)) or isinstance(cmd, A.Keep):
            names: set[str] = set()
            for c in commands[: i + 1]:
                _strings(c, names)
            patterns = [re.compile(fnmatch.translate(n)) for n in names if "*" in n]
            return lambda name: name in names or any(p.match(name) for p in patterns)
        if not isinstance(cmd, _TRANSPARENT):
            return None
    return None


def _strings(obj: Any, out: set[str]) -> None:
    """Every string in a command's tree: names, patterns, texts (more than needed is harmless)."""
    if isinstance(obj, str):
        out.add(obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _strings(x, out)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _strings(k, out)
            _strings(v, out)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            _strings(getattr(obj, f.name), out)


def from_columns(engine: Any, infos: list[IndexInfo]) -> list[FromColumn]:
    """The columns of FROM over `infos`: ES|QL type, multi-valuedness, why unusable, and each
    index's SQL for it. Kept per engine (its catalog is fixed once opened): an index mapping all
    of ECS has ~2,000 fields to resolve."""
    memo = getattr(engine, "memo", None)
    key = ("esql-from", tuple(id(i) for i in infos))
    if memo is not None and key in memo:
        return memo[key]  # type: ignore[no-any-return]
    union: dict[str, list[tuple[IndexInfo, Any]]] = {}
    for info in infos:
        for name in info.field_names():
            ref = info.lookup(name)
            if ref is not None:
                union.setdefault(name, []).append((info, ref))
    out: list[FromColumn] = []
    for name in sorted(union):
        entries = union[name]
        types = {esql_type(r.type) for _, r in entries}
        multi = any(r.multi for _, r in entries)
        if len(types) > 1 or "unsupported" in types:
            if len(types) > 1:
                detail = ", ".join(f"[{t}] in [{', '.join(i.concrete for i, r in entries if esql_type(r.type) == t)}]" for t in sorted(types))
                origin = f"Cannot use field [{name}] due to ambiguities being mapped as [{len(types)}] incompatible types: {detail}"
            else:
                origin = f"Cannot use field [{name}] with unsupported type [{entries[0][1].type}]"
            out.append((name, "unsupported", False, origin, ("NULL::VARCHAR",) * len(infos)))
            continue
        t = types.pop()
        target = SQL[t] + ("[]" if multi else "")
        present = {i.name: r for i, r in entries}
        sqls: list[str] = []
        for info in infos:
            ref = present.get(info.name)
            if ref is None or not ref.column:
                sqls.append(f"NULL::{target}")
            elif multi and not ref.multi:
                c = ref.sql
                sqls.append(f"CASE WHEN {c} IS NULL THEN NULL ELSE [{c}::{SQL[t]}] END")
            else:
                sqls.append(f"{ref.sql}::{target}" if SQL[t] not in ("VARCHAR",) else ref.sql)
        out.append((name, t, multi, "", tuple(sqls)))
    if memo is not None:
        memo[key] = out
    return out

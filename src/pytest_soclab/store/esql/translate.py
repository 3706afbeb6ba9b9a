"""ES|QL syntax tree -> one DuckDB SQL query, verifying names and types on the way.

Each command wraps the previous relation; columns carry generated aliases, so KEEP,
DROP and RENAME only change the schema. Problems are collected and reported together
as a verification_exception, as Elasticsearch does.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.errors import EsError, parsing_exception, verification_exception

from ..catalog import IndexInfo
from ..indexexpr import resolve
from ..layout import DOC_COL, ID_COL, ip_to_int
from ..mappings import esql_type
from ..sqlutil import glob_sql, ident, literal, string
from . import ast as A
from .expr import TE, Col, Ctx, as_list, lit, ordinal, sv, unknown_column
from .functions import (
    AGGREGATES, CONVERSIONS, SCALARS, UNSUPPORTED_FUNCTIONS, expect,
)  # fmt: skip
from .types import CAST_NAMES, SQL, is_numeric, numeric_common, span_sql

DEFAULT_LIMIT = 1000
MAX_LIMIT = 10_000
FULLTEXT = {"MATCH", "MATCH_PHRASE", "QSTR", "KQL"}


@dataclass
class Rel:
    sql: str
    cols: list[Col]
    order: list[str] = field(default_factory=list)
    limit: int | None = None
    # Columns of `sql` that order its rows completely (document order, then the position of an
    # expanded value): SORT breaks its ties with them, so that equal keys come out the same way
    # on every run (DuckDB's parallel sort is not stable).
    ties: list[str] = field(default_factory=lambda: list(TIES))


# Every relation carries these: the index's position in FROM and the document's in the index
# (or the group's position, after STATS).
TIES = ("__idx", "__doc")
_NO_TIES = "0 AS __idx, 0::BIGINT AS __doc"


@dataclass
class Translated:
    sql: str
    cols: list[Col]
    # positions of `cols` the SQL returns, when some columns are constant NULL and left out
    selected: list[int] | None = None


# Stands in the FROM selects for the NULL columns of mapped fields without values: only those
# the query refers to are put there (an alerts index maps all of ECS, ~2,000 fields, and binding
# them all costs DuckDB ~100 ms a query).
_LAZY = "\x00lazy-nulls\x00"
_ALIAS = re.compile(r"\bc\d+\b")


FromColumn = tuple[str, str, bool, str, tuple[str, ...]]  # name, type, multi, origin, SQL per index


def _from_columns(engine: Any, infos: list[IndexInfo]) -> list[FromColumn]:
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


class Translator:
    def __init__(self, engine: Any, ctx: Ctx):
        self.engine = engine
        self.ctx = ctx
        self.fulltext: dict[int, tuple[str, str]] = {}  # id(node) -> (alias, description)
        self.scope: dict[str, Col] = {}
        self.agg_results: dict[int, TE] = {}  # aggregate calls already computed (STATS)
        self.agg_key_scope = False  # resolving names after STATS grouping
        self.lazy_nulls: dict[str, str] = {}  # alias -> its typed NULL, for FROM columns no index has

    # ------------------------------------------------------------------ entry

    def translate(self, query: A.Query) -> Translated:
        src = query.source
        if isinstance(src, A.From):
            rel = self._from(src, query.commands)
        elif isinstance(src, A.Row):
            rel = self._row(src)
        else:
            rel = self._show()
        explicit_limit = False
        for cmd in query.commands:
            rel = self._command(cmd, rel)
            if isinstance(cmd, A.Limit):
                explicit_limit = True
        self._raise()
        limit = rel.limit if rel.limit is not None else DEFAULT_LIMIT
        limit = min(limit, MAX_LIMIT)
        del explicit_limit
        lazy = self.lazy_nulls
        selected = [i for i, c in enumerate(rel.cols) if c.alias not in lazy]
        select = ", ".join(rel.cols[i].alias for i in selected) or "NULL AS __none"
        order = f" ORDER BY {', '.join(rel.order)}" if rel.order else ""
        sql = f"SELECT {select} FROM ({rel.sql}) AS __final{order} LIMIT {limit}"
        if not lazy:
            return Translated(sql.replace(_LAZY, ""), rel.cols)
        used = sorted(set(_ALIAS.findall(sql.replace(_LAZY, ""))) & lazy.keys(), key=lambda a: int(a[1:]))
        sql = sql.replace(_LAZY, "".join(f", {lazy[a]} AS {a}" for a in used))
        return Translated(sql, rel.cols, None if len(selected) == len(rel.cols) else selected)

    def _raise(self) -> None:
        if self.ctx.problems:
            raise verification_exception(self.ctx.problems)

    # ------------------------------------------------------------------ sources

    def _from(self, cmd: A.From, commands: list[A.Command]) -> Rel:
        catalog = self.engine.catalog
        infos: list[IndexInfo] = []
        expr = ",".join(p for p, _ in cmd.indices)
        try:
            infos = resolve(expr, catalog.indices.values(), allow_no_indices=False)
        except EsError as exc:
            if exc.type == "index_not_found_exception":
                missing = str(exc.extra.get("index", expr))
                pos = next((p for n, p in cmd.indices if missing in n), cmd.indices[0][1])
                self.ctx.problem(pos, f"Unknown index [{missing}]")
            elif exc.type == "no_such_remote_cluster_exception":
                self.ctx.problem(cmd.indices[0][1], f"Unknown index [{expr}] ({exc.reason}; cross-cluster search is not supported)")
            else:
                raise
        self._raise()
        # metadata fields
        meta: list[str] = []
        for name, pos in cmd.metadata:
            if name not in ("_index", "_id", "_version", "_score", "_ignored", "_source", "_index_mode"):
                self.ctx.problem(pos, f"unsupported metadata field [{name}]")
            elif name in ("_ignored", "_source", "_index_mode"):
                self.ctx.problem(pos, f"metadata field [{name}] is not supported by the soclab embedded store")
            else:
                meta.append(name)
        # full-text functions in the WHEREs right after FROM become per-index predicate columns
        ft_queries = self._collect_fulltext(commands)
        cols: list[Col] = []
        per_col_sql: list[dict[str, str]] = [dict() for _ in infos]
        for name, t, multi, origin, sqls in _from_columns(self.engine, infos):
            alias = self.ctx.alias()
            cols.append(Col(name, t, alias, multi, origin))
            if sqls[0].startswith("NULL::") and len(set(sqls)) == 1:
                self.lazy_nulls[alias] = sqls[0]
            for k, sql in enumerate(sqls):
                per_col_sql[k][alias] = sql
        meta_cols: list[Col] = []
        for name in meta:
            t = {"_index": "keyword", "_id": "keyword", "_version": "long", "_score": "double"}[name]
            meta_cols.append(Col(name, t, self.ctx.alias(), False))
        selects = []
        for k, info in enumerate(infos):
            parts = [f"{per_col_sql[k][c.alias]} AS {c.alias}" for c in cols if c.alias not in self.lazy_nulls]
            for mc in meta_cols:
                if mc.name == "_index":
                    parts.append(f"{string(info.concrete)} AS {mc.alias}")
                elif mc.name == "_id":
                    parts.append(f"{ident(ID_COL)} AS {mc.alias}")
                elif mc.name == "_version":
                    parts.append(f"1::BIGINT AS {mc.alias}")
                else:
                    parts.append(f"({self._score_sql(info, ft_queries)})::DOUBLE AS {mc.alias}")
            for ft_id, (alias, dsl) in ft_queries.items():
                parts.append(f"coalesce({self._fulltext_sql(info, dsl)}, FALSE) AS {alias}")
            parts.append(f"{k} AS __idx, {ident(DOC_COL)} AS __doc{_LAZY}")
            selects.append(f"SELECT {', '.join(parts)} FROM {self.engine.relation(info)}")
        if not selects:
            selects.append(f"SELECT NULL AS __none, {_NO_TIES} WHERE FALSE")
        # an index order that holds whatever comes after (documents in time order per index)
        return Rel(" UNION ALL ".join(selects), cols + meta_cols, order=[])

    def _collect_fulltext(self, commands: list[A.Command]) -> dict[int, tuple[str, Any]]:
        found: dict[int, tuple[str, Any]] = {}
        allowed_prefix = True
        for cmd in commands:
            if isinstance(cmd, A.Where) and allowed_prefix:
                for node in _walk(cmd.cond):
                    dsl = self._fulltext_dsl(node)
                    if dsl is not None:
                        alias = f"__ft{len(found) + 1}"
                        found[id(node)] = (alias, dsl)
                        self.fulltext[id(node)] = (alias, "")
            elif not isinstance(cmd, (A.Sort, A.Limit, A.Where)):
                allowed_prefix = False
        return found

    def _fulltext_dsl(self, node: A.Node) -> Any:
        if isinstance(node, A.MatchOp):
            if not isinstance(node.field, A.Attr):
                return None
            q = node.query
            value = self._const_value(q)
            return {"match": {node.field.name: {"query": value}}} if value is not None else None
        if isinstance(node, A.Call) and node.name in FULLTEXT:
            if node.name == "KQL":
                return None
            if node.name == "QSTR":
                if len(node.args) < 1:
                    return None
                value = self._const_value(node.args[0])
                return {"query_string": {"query": value}} if isinstance(value, str) else None
            if len(node.args) < 2 or not isinstance(node.args[0], A.Attr):
                return None
            value = self._const_value(node.args[1])
            if value is None:
                return None
            kind = "match_phrase" if node.name == "MATCH_PHRASE" else "match"
            body: dict[str, Any] = {"query": value}
            if node.options:
                body.update(node.options)
            return {kind: {node.args[0].name: body}}
        return None

    def _const_value(self, node: A.Node) -> Any:
        if isinstance(node, A.Literal):
            return node.value
        if isinstance(node, A.Param):
            te = self._param(node)
            return te.value
        return None

    def _fulltext_sql(self, info: IndexInfo, dsl: Any) -> str:
        from ..dsl.build import Ctx as DslCtx
        from ..dsl.query import compile_query

        return compile_query(dsl, DslCtx(info, self.engine.now()), False).where

    def _score_sql(self, info: IndexInfo, ft: dict[int, tuple[str, Any]]) -> str:
        from ..dsl.build import Ctx as DslCtx
        from ..dsl.query import compile_query

        if not ft:
            return "0.0"
        parts = []
        for _, (_, dsl) in ft.items():
            c = compile_query(dsl, DslCtx(info, self.engine.now()), True)
            parts.append(f"CASE WHEN {c.where} THEN {c.score} ELSE 0 END")
        return " + ".join(parts)

    def _row(self, cmd: A.Row) -> Rel:
        self.scope = {}
        parts = []
        cols: list[Col] = []
        for name, expr in cmd.fields:
            te = self.expr(expr)
            if te.type in ("date_period", "time_duration"):
                self.ctx.problem(expr.pos, f"cannot use [{expr.text}] directly in a row assignment")
            alias = self.ctx.alias()
            cols = [c for c in cols if c.name != name]
            col = Col(name, te.type, alias, te.multi)
            cols.append(col)
            self.scope[name] = col
            parts.append(f"{te.sql} AS {alias}")
        return Rel(f"SELECT {', '.join(parts + [_NO_TIES])}", cols)

    def _show(self) -> Rel:
        from importlib.metadata import version as _v

        try:
            ver = _v("pytest-soclab")
        except Exception:  # noqa: BLE001
            ver = "0"
        cols = [Col("version", "keyword", "c_v", False), Col("date", "keyword", "c_d", False), Col("hash", "keyword", "c_h", False)]
        return Rel(f"SELECT '9.1.0' AS c_v, '2025-01-01' AS c_d, {string('soclab-' + ver)} AS c_h, {_NO_TIES}", cols)

    # ------------------------------------------------------------------ commands

    def _command(self, cmd: A.Command, rel: Rel) -> Rel:
        if not isinstance(cmd, (A.Limit, A.Keep, A.Drop, A.Rename)):
            rel = self._materialize(rel)
        self.scope = {c.name: c for c in rel.cols}
        handler = getattr(self, f"_cmd_{cmd.name.lower()}", None)
        if isinstance(cmd, A.Unsupported) or handler is None:
            self.ctx.problem(cmd.pos, f"{cmd.name} is not supported by the soclab embedded store")
            return rel
        return handler(cmd, rel)

    def _cmd_where(self, cmd: A.Where, rel: Rel) -> Rel:
        te = self.expr(cmd.cond)
        if not te.bad and te.type not in ("boolean", "null"):
            self.ctx.problem(cmd.cond.pos, f"Condition expression needs to be boolean, found [{te.type.upper()}]")
            return rel
        te = sv(self.ctx, te, cmd.cond)
        return Rel(f"SELECT * FROM ({rel.sql}) AS __t WHERE {te.sql}", rel.cols, rel.order, None, rel.ties)

    def _materialize(self, rel: Rel) -> Rel:
        if rel.limit is None:
            return rel
        order = f" ORDER BY {', '.join(rel.order)}" if rel.order else ""
        return Rel(f"SELECT * FROM ({rel.sql}) AS __l{order} LIMIT {rel.limit}", rel.cols, rel.order, None, rel.ties)

    def _cmd_eval(self, cmd: A.Eval, rel: Rel) -> Rel:
        rel = self._materialize(rel)
        cols = list(rel.cols)
        parts = []
        sql = rel.sql
        for name, expr in cmd.fields:
            te = self.expr(expr)
            if te.type in ("date_period", "time_duration") and not te.bad:
                self.ctx.problem(expr.pos, f"EVAL does not support type [{te.type}] as the return data type of expression [{expr.text}]")
            alias = self.ctx.alias()
            col = Col(name, te.type, alias, te.multi)
            cols = [c for c in cols if c.name != name] + [col]
            self.scope[name] = col
            parts.append(f"{te.sql} AS {alias}")
            # later expressions of the same EVAL may use this column
            sql = f"SELECT *, {te.sql} AS {alias} FROM ({sql}) AS __e"
        return Rel(sql, cols, rel.order, None, rel.ties)

    def _cmd_limit(self, cmd: A.Limit, rel: Rel) -> Rel:
        n = cmd.n
        if cmd.param is not None:
            te = self._param(A.Param(cmd.pos, "?" + cmd.param, cmd.param))
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

    def _cmd_sort(self, cmd: A.Sort, rel: Rel) -> Rel:
        rel = self._materialize(rel)
        exprs = []
        parts = []
        for key in cmd.keys:
            te = self.expr(key.expr)
            if te.type in ("unsupported",) and not te.bad:
                self.ctx.problem(key.expr.pos, f"cannot sort on {te.type}")
            if te.type in ("date_period", "time_duration", "geo_point") and not te.bad:
                self.ctx.problem(key.expr.pos, f"cannot sort on {te.type}")
            alias = self.ctx.alias()
            sql = te.sql
            if te.multi:
                sql = f"list_{'max' if key.desc else 'min'}({sql})"
            exprs.append(f"{sql} AS {alias}")
            nulls_first = key.nulls_first if key.nulls_first is not None else key.desc
            parts.append(f"{alias} {'DESC' if key.desc else 'ASC'} NULLS {'FIRST' if nulls_first else 'LAST'}")
        sql = f"SELECT *, {', '.join(exprs)} FROM ({rel.sql}) AS __s"
        return Rel(sql, rel.cols, parts + rel.ties, None, rel.ties)

    def _match_patterns(self, cols: list[Col], patterns: list[tuple[str, A.Pos]], verb: str) -> list[tuple[int, Col]]:
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
                    self.ctx.problem(pos, f"No matches found for pattern [{pat}]")
                else:
                    self.ctx.problem(pos, unknown_column(pat, [c.name for c in cols]))
            for c in hits:
                cur = chosen.get(c.name)
                if cur is None or prec > cur[0] or (prec == cur[0]):
                    chosen[c.name] = (prec, pi, c)
        return [(pi, c) for _, pi, c in chosen.values()]

    def _cmd_keep(self, cmd: A.Keep, rel: Rel) -> Rel:
        matched = self._match_patterns(rel.cols, cmd.patterns, "KEEP")
        pos = {c.name: i for i, c in enumerate(rel.cols)}
        matched.sort(key=lambda pc: (pc[0], pos[pc[1].name]))
        return Rel(rel.sql, [c for _, c in matched], rel.order, rel.limit, rel.ties)

    def _cmd_drop(self, cmd: A.Drop, rel: Rel) -> Rel:
        matched = {c.name for _, c in self._match_patterns(rel.cols, cmd.patterns, "DROP")}
        return Rel(rel.sql, [c for c in rel.cols if c.name not in matched], rel.order, rel.limit, rel.ties)

    def _cmd_rename(self, cmd: A.Rename, rel: Rel) -> Rel:
        cols = list(rel.cols)
        for old, new, pos in cmd.pairs:
            if "*" in old or "*" in new:
                self.ctx.problem(pos, f"Using wildcards [*] in RENAME is not allowed [{old} AS {new}]")
                continue
            idx = next((i for i, c in enumerate(cols) if c.name == old), None)
            if idx is None:
                self.ctx.problem(pos, unknown_column(old, [c.name for c in cols]))
                continue
            c = cols[idx]
            renamed = Col(new, c.type, c.alias, c.multi, c.origin)
            cols = [x for j, x in enumerate(cols) if x.name != new or j == idx]
            idx = next(i for i, x in enumerate(cols) if x.alias == c.alias)
            cols[idx] = renamed
        return Rel(rel.sql, cols, rel.order, rel.limit, rel.ties)

    def _cmd_mv_expand(self, cmd: A.MvExpand, rel: Rel) -> Rel:
        rel = self._materialize(rel)
        col = self.scope.get(cmd.field)
        if col is None:
            self.ctx.problem(cmd.field_pos, unknown_column(cmd.field, list(self.scope)))
            return rel
        if not col.multi:
            return rel
        alias = self.ctx.alias()
        new = Col(col.name, col.type, alias, False)
        cols = [new if c.name == col.name else c for c in rel.cols]
        src = col.alias
        pos = self.ctx.alias()
        values = f"CASE WHEN {src} IS NULL THEN [NULL] ELSE {src} END"
        # a select-list unnest keeps rows and values in order; the value's position breaks ties
        sql = f"SELECT *, unnest({values}) AS {alias}, generate_subscripts({values}, 1) AS {pos} FROM ({rel.sql}) AS __x"
        return Rel(sql, cols, rel.order, None, [*rel.ties, pos])

    def _cmd_stats(self, cmd: A.Stats, rel: Rel) -> Rel:
        from .stats import translate_stats

        rel = self._materialize(rel)
        return translate_stats(self, cmd, rel)

    def _cmd_dissect(self, cmd: A.Dissect, rel: Rel) -> Rel:
        from .patterns import dissect_regex

        rel = self._materialize(rel)
        te = self.expr(cmd.expr)
        if not expect(self.ctx, _as_call(cmd.expr, "DISSECT"), 0, te, ("keyword", "text"), "string"):
            return rel
        sep = ""
        for key, value in cmd.options.items():
            if key.lower() != "append_separator":
                self.ctx.problem(cmd.pos, f"Invalid option for DISSECT: [{key}]")
                continue
            if not isinstance(value, A.Literal) or not isinstance(value.value, str):
                self.ctx.problem(cmd.pos, f"Invalid value for DISSECT append_separator: expected a string, but was [{getattr(value, 'text', value)}]")
                continue
            sep = value.value
        try:
            regex, names, appends = dissect_regex(cmd.pattern)
        except ValueError as exc:
            self.ctx.problem(cmd.pos, f"Invalid pattern for dissect: [{cmd.pattern}]: {exc}")
            return rel
        return self._extract(rel, cmd, te, regex, names, appends, sep, {})

    def _cmd_grok(self, cmd: A.Grok, rel: Rel) -> Rel:
        from .patterns import grok_regex

        rel = self._materialize(rel)
        te = self.expr(cmd.expr)
        if not expect(self.ctx, _as_call(cmd.expr, "GROK"), 0, te, ("keyword", "text"), "string"):
            return rel
        try:
            regex, names, types = grok_regex(cmd.pattern)
        except ValueError as exc:
            self.ctx.problem(cmd.pos, f"Invalid GROK pattern [{cmd.pattern}]: {exc}")
            return rel
        return self._extract(rel, cmd, te, regex, names, {}, "", types)

    def _extract(self, rel: Rel, cmd: A.Command, te: TE, regex: str, names: list[str], appends: dict[str, list[str]],
                 sep: str, types: dict[str, str]) -> Rel:  # fmt: skip
        node = getattr(cmd, "expr")
        src = sv(self.ctx, te, node).sql
        groups = [f"g{i}" for i in range(len(names))]
        m = f"__m{self.ctx.alias()}"  # one struct column per extracting command
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
            alias = self.ctx.alias()
            cols = [c for c in cols if c.name != name] + [Col(name, t, alias, False)]
            parts.append(f"{value} AS {alias}")
        if not parts:
            return rel
        sql = f"SELECT *, {', '.join(parts)} FROM (SELECT *, {struct} AS {m} FROM ({rel.sql}) AS __d0) AS __d1"
        return Rel(sql, cols, rel.order, None, rel.ties)

    # ------------------------------------------------------------------ expressions

    def expr(self, node: A.Node) -> TE:
        method = getattr(self, f"_x_{type(node).__name__.lower()}")
        return method(node)

    def _x_literal(self, node: A.Literal) -> TE:
        t = node.type
        if t in ("date_period", "time_duration"):
            return TE(span_sql(node.value), t, const=True, value=node.value)
        if isinstance(node.value, list):
            vals = [v for v in node.value if v is not None]
            if not vals:
                return TE("NULL", "null", const=True, value=None)
            if t == "integer":
                sql = "[" + ", ".join(f"{v}::INTEGER" for v in vals) + "]"
            elif t == "long":
                sql = "[" + ", ".join(f"{v}::BIGINT" for v in vals) + "]"
            else:
                sql = literal(vals)
            if len(vals) == 1:
                return lit(vals[0], t)
            return TE(sql, t, multi=True, const=True, value=vals)
        return lit(node.value, t)

    def _param(self, node: A.Param) -> TE:
        params = self.ctx.params
        if params is None:
            raise parsing_exception(f"{node.pos}: Unknown query parameter [{node.name or '?'}]")
        value: Any
        if node.name == "":
            idx = self.ctx.next_param
            self.ctx.next_param += 1
            if idx >= len(params):
                raise parsing_exception(f"{node.pos}: Not enough actual parameters {len(params)}")
            value = _param_value(params[idx])
        elif node.name.isdigit():
            idx = int(node.name) - 1
            if idx < 0 or idx >= len(params):
                raise parsing_exception(f"{node.pos}: No parameter is defined for position {node.name}, did you mean any position between 1 and {len(params)}?")
            value = _param_value(params[idx])
        else:
            named = {}
            for p in params:
                if isinstance(p, dict):
                    named.update(p)
            if node.name not in named:
                raise parsing_exception(f"{node.pos}: Unknown query parameter [{node.name}]" + (f", did you mean any of {sorted(named)}?" if named else ""))
            value = _param_value(named[node.name])
        if isinstance(value, dict):
            raise parsing_exception(f"{node.pos}: Unsupported parameter value {value!r}")
        if isinstance(value, bool):
            return lit(value, "boolean")
        if isinstance(value, int):
            return lit(value, "integer" if -(2**31) <= value < 2**31 else "long")
        if isinstance(value, float):
            return lit(value, "double")
        if isinstance(value, str):
            return lit(value, "keyword")
        if value is None:
            return lit(None, "null")
        if isinstance(value, list):
            return self._x_literal(A.Literal(node.pos, node.text, value, _list_type(value)))
        raise parsing_exception(f"{node.pos}: Unsupported parameter value {value!r}")

    def _x_param(self, node: A.Param) -> TE:
        return self._param(node)

    def _x_attr(self, node: A.Attr) -> TE:
        col = self.scope.get(node.name)
        if col is None:
            if self.agg_key_scope:
                return self.ctx.problem(node.pos, f"column [{node.name}] must appear in the BY clause or be used in an aggregate function")
            return self.ctx.problem(node.pos, unknown_column(node.name, list(self.scope)))
        if col.type == "unsupported":
            return self.ctx.problem(node.pos, col.origin or f"Cannot use field [{node.name}] with unsupported type")
        return TE(col.alias, col.type, col.multi)

    def _x_logic(self, node: A.Logic) -> TE:
        left, right = self.expr(node.left), self.expr(node.right)
        for side, te in (("first", left), ("second", right)):
            if not te.bad and te.type not in ("boolean", "null"):
                self.ctx.problem(node.pos, f"{side} argument of [{node.text}] must be [boolean], found value [{(node.left if side == 'first' else node.right).text}] type [{te.type}]")
                return TE("NULL", "boolean", bad=True)
        left, right = sv(self.ctx, left, node), sv(self.ctx, right, node)
        return TE(f"({left.sql} {node.op} {right.sql})", "boolean", bad=left.bad or right.bad)

    def _x_not(self, node: A.Not) -> TE:
        te = self.expr(node.expr)
        if not te.bad and te.type not in ("boolean", "null"):
            return self.ctx.problem(node.pos, f"argument of [{node.text}] must be [boolean], found value [{node.expr.text}] type [{te.type}]")
        te = sv(self.ctx, te, node)
        return TE(f"(NOT {te.sql})", "boolean", bad=te.bad)

    def _x_neg(self, node: A.Neg) -> TE:
        te = self.expr(node.expr)
        if te.bad:
            return te
        if te.type in ("date_period", "time_duration"):
            return TE(f"(-{te.sql})", te.type, const=te.const, value=(-te.value[0], te.value[1]) if te.const else None)
        if not is_numeric(te.type) and te.type != "null":
            return self.ctx.problem(node.pos, f"argument of [{node.text}] must be [numeric, date_period or time_duration], found value [{node.expr.text}] type [{te.type}]")
        te = sv(self.ctx, te, node)
        return self._overflow_guard(node, f"(-({te.sql})::HUGEINT)" if te.type in ("integer", "long") else f"(-{te.sql})", te.type)

    def _overflow_guard(self, node: A.Node, sql: str, t: str) -> TE:
        if t == "integer":
            cond = f"({sql}) NOT BETWEEN -2147483648 AND 2147483647"
            return TE(f"(CASE WHEN {self.ctx.warn_sql(node, cond, 'java.lang.ArithmeticException: integer overflow')} THEN NULL ELSE ({sql})::INTEGER END)", t)
        if t == "long":
            cond = f"({sql}) NOT BETWEEN -9223372036854775808 AND 9223372036854775807"
            return TE(f"(CASE WHEN {self.ctx.warn_sql(node, cond, 'java.lang.ArithmeticException: long overflow')} THEN NULL ELSE ({sql})::BIGINT END)", t)
        return TE(sql, t)

    def _x_binop(self, node: A.BinOp) -> TE:
        left, right = self.expr(node.left), self.expr(node.right)
        if left.bad or right.bad:
            return TE("NULL", "null", bad=True)
        if node.op in ("+", "-", "*", "/", "%"):
            return self._arith(node, left, right)
        return self._compare(node, left, right)

    def _arith(self, node: A.BinOp, left: TE, right: TE) -> TE:
        op = node.op
        spans = ("date_period", "time_duration")
        if left.type in ("date", "date_nanos") and right.type in spans and op in "+-":
            l, r = sv(self.ctx, left, node), right
            return TE(f"({l.sql} {op} {r.sql})", left.type)
        if left.type in spans and right.type in ("date", "date_nanos") and op == "+":
            r = sv(self.ctx, right, node)
            return TE(f"({r.sql} + {left.sql})", right.type)
        if left.type in spans and right.type == left.type and op in "+-" and left.const and right.const:
            n1, u1 = left.value
            n2, u2 = right.value
            if u1 == u2:
                value = (n1 + n2 if op == "+" else n1 - n2, u1)
                return TE(span_sql(value), left.type, const=True, value=value)
        if left.type == "null" or right.type == "null":
            t = left.type if left.type != "null" else right.type
            return TE("NULL", t if is_numeric(t) else "null")
        if not (is_numeric(left.type) and is_numeric(right.type)):
            if is_numeric(left.type) or left.type in ("date", "date_nanos") or left.type in spans:
                bad, which, other = right, "second", node.right
                if not is_numeric(left.type) and left.type not in spans and left.type not in ("date", "date_nanos"):
                    bad, which, other = left, "first", node.left
            else:
                bad, which, other = left, "first", node.left
            allowed = "datetime or numeric" if op in "+-" else "numeric"
            return self.ctx.problem(node.pos, f"{which} argument of [{node.text}] must be [{allowed}], found value [{other.text}] type [{bad.type}]")
        l, r = sv(self.ctx, left, node), sv(self.ctx, right, node)
        t = numeric_common(left.type, right.type)
        if t == "double":
            a, b = f"({l.sql})::DOUBLE", f"({r.sql})::DOUBLE"
            if op == "/":
                return TE(f"(CASE WHEN {self.ctx.warn_sql(node, f'{b} = 0', 'java.lang.ArithmeticException: / by zero')} THEN NULL ELSE {a} / {b} END)", t)
            if op == "%":
                return TE(f"(CASE WHEN {self.ctx.warn_sql(node, f'{b} = 0', 'java.lang.ArithmeticException: / by zero')} THEN NULL ELSE fmod({a}, {b}) END)", t)
            return TE(f"({a} {op} {b})", t)
        a, b = f"({l.sql})::HUGEINT", f"({r.sql})::HUGEINT"
        if op in ("/", "%"):
            div = f"(CASE WHEN {self.ctx.warn_sql(node, f'{b} = 0', 'java.lang.ArithmeticException: / by zero')} THEN NULL ELSE "
            if op == "/":
                # Java integer division truncates toward zero
                expr = f"(CASE WHEN ({a} < 0) != ({b} < 0) THEN -(abs({a}) // abs({b})) ELSE abs({a}) // abs({b}) END)"
            else:
                expr = f"({a} - {b} * (CASE WHEN ({a} < 0) != ({b} < 0) THEN -(abs({a}) // abs({b})) ELSE abs({a}) // abs({b}) END))"
            return TE(f"{div}({expr})::{SQL[t]} END)", t)
        return self._overflow_guard(node, f"({a} {op} {b})", t)

    def _compare(self, node: A.BinOp, left: TE, right: TE) -> TE:
        op = node.op
        left, right = self._implicit_cast(left, right, node.left), self._implicit_cast(right, left, node.right)
        if op == "=~":
            for side, te in (("first", left), ("second", right)):
                if te.type not in ("keyword", "text", "null"):
                    which = node.left if side == "first" else node.right
                    return self.ctx.problem(node.pos, f"{side} argument of [{node.text}] must be [string], found value [{which.text}] type [{te.type}]")
        if left.type != "null" and right.type != "null":
            lt, rt = left.type, right.type
            ok = (
                (is_numeric(lt) and is_numeric(rt))
                or (lt in ("keyword", "text") and rt in ("keyword", "text"))
                or (lt in ("date", "date_nanos") and rt in ("date", "date_nanos"))
                or lt == rt
            )
            if not ok:
                fam = "numeric" if is_numeric(lt) else ("datetime" if lt in ("date", "date_nanos") else lt)
                return self.ctx.problem(node.pos, f"first argument of [{node.text}] is [{fam}] so second argument must also be [{fam}] but was [{rt}]")
            if op in ("<", "<=", ">", ">=") and lt in ("boolean", "geo_point"):
                return self.ctx.problem(node.pos, f"first argument of [{node.text}] must be [datetime, double, integer, ip, keyword, long, text, unsigned_long or version], found value [{node.left.text}] type [{lt}]")
            if op == "=~" and (lt not in ("keyword", "text") or rt not in ("keyword", "text")):
                return self.ctx.problem(node.pos, f"first argument of [{node.text}] must be [string], found value [{node.left.text}] type [{lt}]")
        l, r = sv(self.ctx, left, node), sv(self.ctx, right, node)
        if op == "=~":
            return TE(f"(lower({l.sql}) = lower({r.sql}))", "boolean")
        sql_op = {"==": "=", "!=": "<>"}.get(op, op)
        return TE(f"({l.sql} {sql_op} {r.sql})", "boolean")

    def _implicit_cast(self, te: TE, other: TE, node: A.Node) -> TE:
        """String literals compared with dates, ips and versions are converted (as ES|QL does)."""
        if not (te.const and isinstance(te.value, str)) or other.type not in ("date", "date_nanos", "ip", "version"):
            return te
        if other.type in ("date", "date_nanos"):
            from ..layout import ms_to_datetime, parse_date_ms

            ms = parse_date_ms(te.value)
            if ms is None:
                return self.ctx.problem(node.pos, f"Cannot convert string [{te.value}] to [DATETIME], error [failed to parse date field [{te.value}] with format [strict_date_optional_time]]")
            return TE(literal(ms_to_datetime(ms)), "date", const=True, value=te.value)
        if other.type == "ip":
            num = ip_to_int(te.value)
            if num is None:
                return self.ctx.problem(node.pos, f"Cannot convert string [{te.value}] to [IP], error ['{te.value}' is not an IP string literal.]")
            return TE(f"'{num}'::UHUGEINT", "ip", const=True, value=te.value)
        return TE(te.sql, "version", const=True, value=te.value)

    def _x_inlist(self, node: A.InList) -> TE:
        te = self.expr(node.expr)
        items = [self._implicit_cast(self.expr(i), te, i) for i in node.items]
        if te.bad or any(i.bad for i in items):
            return TE("NULL", "boolean", bad=True)
        for i, it in zip(node.items, items):
            if it.type == "null" or te.type == "null":
                continue
            if not ((is_numeric(te.type) and is_numeric(it.type)) or (te.type in ("keyword", "text") and it.type in ("keyword", "text")) or te.type == it.type):
                return self.ctx.problem(node.pos, f"{ordinal(node.items.index(i) + 1, len(node.items) + 1)}argument of [{node.text}] must be [{te.type}], found value [{i.text}] type [{it.type}]")
        x = sv(self.ctx, te, node)
        vals = [sv(self.ctx, it, node) for it in items]
        sql = f"({x.sql} {'NOT ' if node.negated else ''}IN ({', '.join(v.sql for v in vals)}))"
        return TE(sql, "boolean")

    def _x_isnull(self, node: A.IsNull) -> TE:
        te = self.expr(node.expr)
        return TE(f"(({te.sql}) IS {'NOT ' if node.negated else ''}NULL)", "boolean", bad=te.bad)

    def _x_like(self, node: A.Like) -> TE:
        te = self.expr(node.expr)
        if te.bad:
            return TE("NULL", "boolean", bad=True)
        if te.type not in ("keyword", "text", "null"):
            return self.ctx.problem(node.pos, f"argument of [{node.text}] must be [string], found value [{node.expr.text}] type [{te.type}]")
        x = sv(self.ctx, te, node)
        conds = []
        for pat in node.patterns:
            if node.rlike:
                from ..dsl.lucene_regex import to_re2

                try:
                    conds.append(f"regexp_full_match({x.sql}, {string(to_re2(pat))})")
                except EsError as exc:
                    return self.ctx.problem(node.pos, f"Invalid regex pattern for RLIKE [{pat}]: {exc.reason}")
            else:
                conds.append(glob_sql(x.sql, pat))
        sql = "(" + " OR ".join(conds) + ")"
        if node.negated:
            sql = f"(NOT {sql})"
        return TE(sql, "boolean")

    def _x_cast(self, node: A.Cast) -> TE:
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
        return self._x_call(call)

    def _x_matchop(self, node: A.MatchOp) -> TE:
        ft = self.fulltext.get(id(node))
        if ft is None:
            return self.ctx.problem(node.pos, f"[:] operator is only supported in WHERE commands directly after FROM, on index fields, with a constant query")
        field_te = self.expr(node.field)
        if field_te.bad:
            return field_te
        return TE(ft[0], "boolean")

    def _x_call(self, node: A.Call) -> TE:
        done = self.agg_results.get(id(node))
        if done is not None:
            return done
        name = node.name
        if name in AGGREGATES:
            if not self.ctx.in_stats:
                return self.ctx.problem(node.pos, f"aggregate function [{node.text}] not allowed outside STATS command")
            return self.ctx.problem(node.pos, f"nested aggregations [{node.text}] not allowed inside other aggregations")
        if name in FULLTEXT:
            ft = self.fulltext.get(id(node))
            if ft is None:
                if name == "KQL":
                    return self.ctx.problem(node.pos, "KQL is not supported by the soclab embedded store")
                return self.ctx.problem(node.pos, f"[{name}] function is only supported in WHERE commands directly after FROM, on index fields, with constant arguments")
            for a in node.args[:1] if name != "QSTR" else []:
                te = self.expr(a)
                if te.bad:
                    return te
            return TE(ft[0], "boolean")
        if name == "BUCKET":
            if not self.ctx.in_stats:
                return self.ctx.problem(node.pos, f"grouping function [{node.text}] cannot be used outside the BY clause of STATS")
            from .stats import bucket

            return bucket(self, node)
        if name == "CASE":
            return self._case(node)
        if name in CONVERSIONS:
            from .convert import convert

            return convert(self, node)
        if name in UNSUPPORTED_FUNCTIONS:
            return self.ctx.problem(node.pos, f"function [{name}] is not supported by the soclab embedded store")
        fn = SCALARS.get(name)
        if fn is None:
            return self.ctx.problem(node.pos, f"Unknown function [{node.text.split('(')[0]}]")
        if node.star:
            return self.ctx.problem(node.pos, f"Unknown function [{name}(*)]")
        n = len(node.args)
        if n < fn.min_args or (fn.max_args is not None and n > fn.max_args):
            return self.ctx.problem(node.pos, _arity_message(node, fn.min_args, fn.max_args))
        args = [self.expr(a) for a in node.args]
        if any(a.bad for a in args):
            return TE("NULL", "null", bad=True)
        return fn.build(self.ctx, node, args)

    def _case(self, node: A.Call) -> TE:
        if len(node.args) < 2:
            return self.ctx.problem(node.pos, f"error building [case]: expects at least two arguments")
        args = [self.expr(a) for a in node.args]
        if any(a.bad for a in args):
            return TE("NULL", "null", bad=True)
        pairs = len(args) // 2
        parts = []
        values = []
        for i in range(pairs):
            cond, val = args[2 * i], args[2 * i + 1]
            if cond.type not in ("boolean", "null"):
                return self.ctx.problem(node.pos, f"{ordinal(2 * i, len(args))}argument of [{node.text}] must be [boolean], found value [{node.args[2 * i].text}] type [{cond.type}]")
            values.append(val)
        if len(args) % 2:
            values.append(args[-1])
        from .functions import _unify

        t = _unify({v.type for v in values if v.type != "null"})
        if t is None:
            return self.ctx.problem(node.pos, f"all values of [{node.text}] must have the same type")
        multi = any(v.multi for v in values)
        def val_sql(v: TE) -> str:
            if multi:
                return as_list(v)
            return v.sql if v.type == t or v.type == "null" else f"({v.sql})::{SQL[t]}"
        for i in range(pairs):
            cond = sv(self.ctx, args[2 * i], node)
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


def _param_value(p: Any) -> Any:
    if isinstance(p, dict) and len(p) == 1 and "value" in p:
        return p["value"]
    return p


def _list_type(values: list[Any]) -> str:
    vals = [v for v in values if v is not None]
    if all(isinstance(v, bool) for v in vals):
        return "boolean"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return "long" if any(abs(v) >= 2**31 for v in vals) else "integer"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return "double"
    return "keyword"


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


def _as_call(expr: A.Node, name: str) -> A.Call:
    return A.Call(expr.pos, f"{name} {expr.text}", name, [expr])


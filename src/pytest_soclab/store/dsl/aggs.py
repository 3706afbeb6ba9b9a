"""Aggregations as grouped SQL.

The matching documents become one relation (`docs`) with a column per field an
aggregation uses. Each bucket level adds a key column (unnesting multi-valued fields,
as a document with several values falls in several buckets); a level's buckets are
chosen in SQL (top terms per parent with window functions) and its sub-aggregations
run on the documents of the chosen buckets only.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..datefmt import DateFormatError, format_ms, parse_timezone
from ..layout import DOC_COL, ip_to_int
from ..mappings import TEXT_TYPES
from ..sqlutil import ident, literal, string
from .aggs_parse import (  # noqa: F401 - parse_aggs is re-exported
    AggNode,
    BUCKET_TYPES,
    METRIC_TYPES,
    _float,
    _int,
    _number_param,
    parse_aggs,
)
from .aggs_values import (
    FieldCol,
    _FAMILY_SQL,
    _SENTINEL,
    _after_key_literal,
    _bound_sql,
    _composite_value,
    _date_bucket,
    _empty,
    _family,
    _fill,
    _include_exclude,
    _key_literal,
    _metric_exprs,
    _metric_result,
    _missing_sql,
    _num,
    _order_buckets,
    _order_metric,
    _parents,
    _range_bucket,
    _render_key,
    _sort_render,
    _sub_results,
)
from .errors import EsError, bad_request, parsing_exception, shard_failure, unsupported
from .query import compile_query

if TYPE_CHECKING:
    from ..engine import Engine
    from .search import Plan

# ---------------------------------------------------------------------------- the docs relation


class DocsBuilder:
    """Collects the fields and filter queries the aggregation tree needs, then writes `docs`."""

    def __init__(self, plans: list[Plan], min_score: Any):
        self.plans = plans
        self.min_score = min_score
        self.fields: dict[str, FieldCol] = {}
        self.queries: list[tuple[str, Any]] = []
        self.need_score = False
        self.source_cols: list[tuple[str, str]] | None = None  # for top_hits: every stored column

    def field(self, name: Any, agg: str, kind: str, *, allow_text: bool = False) -> FieldCol | None:
        if not isinstance(name, str):
            raise parsing_exception(f"[{kind}] field must be a string")
        if name in self.fields:
            return self.fields[name]
        refs = [p.info.lookup(name) for p in self.plans]
        present = [r for r in refs if r is not None]
        if not present:
            return None
        types = {r.type for r in present}
        fams = {_family(t) for t in types}
        if fams == {"long", "double"}:
            fams = {"double"}
        if len(fams) > 1:
            raise shard_failure(self.plans[0].info.concrete, "illegal_argument_exception",
                                f"Field [{name}] is mapped with incompatible types across indices: {sorted(types)}")  # fmt: skip
        t = present[0].type if len(types) == 1 else ("double" if "double" in fams else present[0].type)
        if t in TEXT_TYPES and not allow_text:
            raise shard_failure(
                self.plans[0].info.concrete, "illegal_argument_exception",
                f"Text fields are not optimised for operations that require per-document field data like "
                f"aggregations and sorting, so these operations are disabled by default. Please use a keyword field "
                f"instead. Alternatively, set fielddata=true on [{name}] in order to load field data by uninverting "
                f"the inverted index. Note that this can use significant memory.",
            )  # fmt: skip
        if t in ("flattened", "nested", "geo_point", "binary"):
            raise shard_failure(self.plans[0].info.concrete, "illegal_argument_exception",
                                f"Field [{name}] of type [{t}] is not supported for aggregation [{agg}]")  # fmt: skip
        col = FieldCol(f"f{len(self.fields)}", name, t, fams.pop(), any(r.multi for r in present))
        self.fields[name] = col
        return col

    def query(self, q: Any) -> str:
        alias = f"q{len(self.queries)}"
        self.queries.append((alias, q))
        return alias

    def sql(self) -> str:
        parts = []
        from .search import _filtered

        for pos, plan in enumerate(self.plans):
            cols = [f"{pos} AS __i", f"{ident(DOC_COL)} AS __d"]
            if self.need_score:
                cols.append(f"({plan.score})::DOUBLE AS __s")
            for name, col in self.fields.items():
                ref = plan.info.lookup(name)
                target = _FAMILY_SQL[col.family] + ("[]" if col.multi else "")
                if ref is None:
                    cols.append(f"NULL::{target} AS {col.alias}")
                elif col.multi and not ref.multi:
                    c = ref.sql
                    cols.append(f"CASE WHEN {c} IS NULL THEN NULL ELSE [{c}::{_FAMILY_SQL[col.family]}] END AS {col.alias}")
                else:
                    cols.append(f"{ref.sql}::{target} AS {col.alias}")
            for alias, q in self.queries:
                cols.append(f"({compile_query(q, plan.ctx, False).where}) AS {alias}")
            if self.source_cols is not None:
                cols.append(f"{ident('_id')} AS __id")
            parts.append(f"SELECT {', '.join(cols)} FROM {plan.rel} WHERE {_filtered(plan, 'TRUE', self.min_score)}")
        return " UNION ALL ".join(parts)


# ---------------------------------------------------------------------------- evaluation


@dataclass
class Level:
    """A relation over docs with key columns k0..kn (each bucket level adds one or more)."""

    sql: str
    keys: list[str]
    families: list[str]


def run_aggs(engine: Engine, plans: list[Plan], spec: Any, min_score: Any) -> dict[str, Any]:
    nodes = parse_aggs(spec)
    if not plans:
        return {n.name: _empty(n) for n in nodes}
    builder = DocsBuilder(plans, min_score)
    runner = _Runner(engine, builder)
    runner.prepare(nodes)
    runner.docs_sql = builder.sql()
    root = Level("SELECT * FROM docs", [], [])
    results = runner.eval(nodes, root).get((), {})
    return {n.name: results.get(n.name, _empty(n)) for n in nodes}


class _Runner:
    def __init__(self, engine: Engine, builder: DocsBuilder):
        self.engine = engine
        self.b = builder
        self.docs_sql = ""
        self.cols: dict[int, Any] = {}  # id(node) -> prepared info
        self.level_no = 0

    # -- preparation: resolve fields and filters up front (one docs relation for the whole tree)

    def prepare(self, nodes: list[AggNode]) -> None:
        for node in nodes:
            p = node.params
            t = node.type
            if t in ("filter",):
                self.cols[id(node)] = self.b.query(p)
            elif t == "filters":
                filters = p.get("filters")
                if isinstance(filters, dict):
                    self.cols[id(node)] = [(k, self.b.query(v)) for k, v in filters.items()]
                elif isinstance(filters, list):
                    self.cols[id(node)] = [(str(i), self.b.query(v)) for i, v in enumerate(filters)]
                else:
                    raise parsing_exception("[filters] must be an object or an array")
            elif t == "global":
                raise unsupported("[global] aggregation")
            elif t == "composite":
                sources = p.get("sources")
                if not isinstance(sources, list) or not sources:
                    raise parsing_exception("[composite] [sources] must be a non-empty array")
                prepared = []
                for src in sources:
                    if not isinstance(src, dict) or len(src) != 1:
                        raise parsing_exception("[composite] each source must be an object with one named source")
                    sname, sdef = next(iter(src.items()))
                    if not isinstance(sdef, dict) or len(sdef) != 1:
                        raise parsing_exception(f"[composite] source [{sname}] must have one type")
                    stype, sparams = next(iter(sdef.items()))
                    if stype not in ("terms", "histogram", "date_histogram"):
                        raise unsupported(f"[composite] source type [{stype}]")
                    col = self.b.field(sparams.get("field"), node.name, stype)
                    prepared.append((sname, stype, sparams, col))
                self.cols[id(node)] = prepared
            elif t == "multi_terms":
                terms = p.get("terms")
                if not isinstance(terms, list) or len(terms) < 2:
                    raise parsing_exception("[multi_terms] requires at least two [terms]")
                self.cols[id(node)] = [self.b.field(tt.get("field"), node.name, t) for tt in terms]
            elif t == "top_hits":
                from .search import parse_sort

                self.b.need_score = True
                self.b.source_cols = []
                for key in parse_sort(p.get("sort")):
                    if key.kind == "field":
                        self.b.field(key.field, node.name, "top_hits")
            elif "field" in p:
                self.cols[id(node)] = self.b.field(p["field"], node.name, t)
            elif t in METRIC_TYPES or t in ("terms", "date_histogram", "histogram", "range", "date_range",
                                             "ip_range", "missing", "rare_terms"):  # fmt: skip
                if "script" in p:
                    raise unsupported(f"[{t}] aggregation with [script]")
                raise bad_request(f"Required one of fields [field, script], but none were specified.")
            self.prepare(node.children)

    # -- evaluation

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        return self.engine.query(f"WITH docs AS ({self.docs_sql}) {sql}")

    def eval(self, nodes: list[AggNode], level: Level) -> dict[tuple[Any, ...], dict[str, Any]]:
        out: dict[tuple[Any, ...], dict[str, Any]] = {}
        metrics = [n for n in nodes if n.type in METRIC_TYPES and n.type != "top_hits"]
        if metrics:
            self._metrics(metrics, level, out)
        for node in nodes:
            if node.type == "top_hits":
                self._top_hits(node, level, out)
            elif node.type in BUCKET_TYPES:
                self._bucket(node, level, out)
        return out

    # ---------------------------------------------------------------- metrics

    def _metrics(self, nodes: list[AggNode], level: Level, out: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        exprs: list[str] = []
        slots: list[tuple[AggNode, int, int]] = []
        for node in nodes:
            col = self.cols.get(id(node))
            mexprs = _metric_exprs(node, col)
            slots.append((node, len(exprs), len(mexprs)))
            exprs.extend(mexprs)
        keys = ", ".join(level.keys)
        select = ", ".join(level.keys + exprs) if exprs else keys
        group = f" GROUP BY {keys}" if keys else ""
        rows = self.query(f"SELECT {select} FROM ({level.sql}){group}")
        nk = len(level.keys)
        for row in rows:
            key = tuple(row[:nk])
            vals = row[nk:]
            bucket = out.setdefault(key, {})
            for node, start, n in slots:
                bucket[node.name] = _metric_result(node, self.cols.get(id(node)), vals[start : start + n])

    def _top_hits(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        from .search import parse_sort

        sort = parse_sort(node.params.get("sort"))
        if len(sort) <= 1:
            self._top_hits_by(node, level, out, sort)
        else:
            self._top_hits_window(node, level, out)

    def _top_hits_by(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]], sort: list[Any]) -> None:
        """top_hits as one grouped max_by/min_by over whole rows: no second lookup of the documents."""
        from ..render import build_source, source_filter

        p = node.params
        size, offset = _int(p, "size", 3, minimum=0), _int(p, "from", 0, minimum=0)
        if size < 0 or offset < 0:
            raise bad_request("[from] and [size] of [top_hits] must be non-negative")
        pos = "(__i::DOUBLE * 1e12 + __d::DOUBLE)"
        key = sort[0] if sort else None
        col: FieldCol | None = None
        if key is None or key.kind == "score":
            fn, val = "max_by", f"struct_pack(k := __s, t := -{pos})"
            if key is not None and not key.desc:
                fn, val = "min_by", f"struct_pack(k := __s, t := {pos})"
        elif key.kind == "doc":
            fn, val = ("max_by", f"-{pos}") if not key.desc else ("max_by", pos)
            if not key.desc:
                fn, val = "min_by", pos
        else:
            col = self.b.fields.get(key.field)
            if col is None:
                fn, val = "min_by", pos
            else:
                expr = col.alias if not col.multi else f"list_{'max' if key.desc else 'min'}({col.alias})"
                low, high = _SENTINEL[col.family]
                if key.desc:
                    fn, val = "max_by", f"struct_pack(k := coalesce({expr}, {low}), t := -{pos})"
                else:
                    fn, val = "min_by", f"struct_pack(k := coalesce({expr}, {high}), t := {pos})"
        fields = ", ".join(["__i := __i", "__d := __d", "__s := __s", "__id := __id"]
                           + ([f"__k := {col.alias}"] if col is not None else []))  # fmt: skip
        keys = ", ".join(level.keys)
        n = max(1, offset + size)
        sql = (
            f"SELECT {keys + ', ' if keys else ''}count(*) AS __tot, {fn}(struct_pack({fields}), {val}, {n}) AS __top "
            f"FROM ({level.sql}){' GROUP BY ' + keys if keys else ''}"
        )
        rows = self.query(sql)
        nk = len(level.keys)
        enabled, inc, exc = source_filter(p.get("_source"))
        scored = key is None or key.kind == "score"
        picked_all = [(tuple(r[:nk]), int(r[nk]), (r[nk + 1] or [])[offset : offset + size]) for r in rows]
        docs: dict[tuple[int, int], dict[str, Any]] = {}
        if enabled and size:
            from .search import _fetch

            wanted = [(int(rec["__i"]), int(rec["__d"])) for _, _, picked in picked_all for rec in picked]
            docs = _fetch(self.engine, self.b.plans, wanted)
        for parent, total, picked in picked_all:
            hits = []
            for rec in picked:
                i, d = int(rec["__i"]), int(rec["__d"])
                plan = self.b.plans[i]
                hit: dict[str, Any] = {"_index": plan.info.concrete, "_id": rec["__id"],
                                       "_score": float(rec["__s"]) if scored and rec["__s"] is not None else None}  # fmt: skip
                if enabled:
                    hit["_source"] = build_source(plan.info, docs.get((i, d), {}), inc, exc)
                if key is not None:
                    if key.kind == "score":
                        hit["sort"] = [float(rec["__s"])]
                    elif key.kind == "doc":
                        hit["sort"] = [d]
                    else:
                        hit["sort"] = [_sort_render(rec.get("__k"), col, key.desc)]
                hits.append(hit)
            max_score = max((h["_score"] for h in hits if h["_score"] is not None), default=None)
            out.setdefault(parent, {})[node.name] = {
                "hits": {"total": {"value": total, "relation": "eq"}, "max_score": max_score, "hits": hits}
            }

    def _top_hits_window(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        from ..render import build_source, source_filter
        from .search import parse_sort

        p = node.params
        size = _int(p, "size", 3, minimum=0)
        offset = _int(p, "from", 0, minimum=0)
        sort = parse_sort(p.get("sort"))
        order: list[str] = []
        sort_cols: list[tuple[int, Any, FieldCol | None]] = []
        for i, key in enumerate(sort):
            d = "DESC" if key.desc else "ASC"
            if key.kind == "score":
                order.append(f"__s {d}")
            elif key.kind == "doc":
                order.append(f"__i {d}, __d {d}")
            else:
                col = self.b.fields.get(key.field)
                if col is None:  # unmapped everywhere: sorts nothing
                    continue
                expr = col.alias if not col.multi else f"list_{'max' if key.desc else 'min'}({col.alias})"
                nulls = "NULLS LAST" if key.missing_last else "NULLS FIRST"
                order.append(f"{expr} {d} {nulls}")
                sort_cols.append((i, key, col))
        if not sort:
            order.append("__s DESC")
        order += ["__i ASC", "__d ASC"]
        keys = ", ".join(level.keys)
        part = f"PARTITION BY {keys} " if keys else ""
        extra = "".join(f", {c.alias}" for _, _, c in sort_cols)
        sql = (
            f"SELECT {keys + ', ' if keys else ''}__i, __d, __s{extra}, count(*) OVER ({part}) AS __tot FROM ({level.sql}) "
            f"QUALIFY row_number() OVER ({part}ORDER BY {', '.join(order)}) BETWEEN {offset + 1} AND {offset + size} "
            f"ORDER BY {keys + ', ' if keys else ''}row_number() OVER ({part}ORDER BY {', '.join(order)})"
        )
        rows = self.query(sql)
        nk = len(level.keys)
        plans = self.b.plans
        wanted: dict[int, list[int]] = {}
        for row in rows:
            wanted.setdefault(row[nk], []).append(int(row[nk + 1]))
        docs: dict[tuple[int, int], dict[str, Any]] = {}
        for i, ds in wanted.items():
            plan = plans[i]
            table = self.engine.query_arrow(
                f"SELECT * FROM {plan.rel} WHERE {ident(DOC_COL)} IN ({', '.join(map(str, ds))})"
            )
            for rec in table.to_pylist():
                docs[(i, int(rec[DOC_COL]))] = rec
        enabled, inc, exc = source_filter(p.get("_source"))
        grouped: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        totals: dict[tuple[Any, ...], int] = {}
        scored = not sort or any(k.kind == "score" for k in sort)
        for row in rows:
            key = tuple(row[:nk])
            i, d, s = row[nk], int(row[nk + 1]), row[nk + 2]
            totals[key] = int(row[-1])
            doc = docs.get((i, d), {})
            hit: dict[str, Any] = {"_index": plans[i].info.concrete, "_id": doc.get("_id"),
                                   "_score": float(s) if scored else None}  # fmt: skip
            if enabled:
                hit["_source"] = build_source(plans[i].info, doc, inc, exc)
            if sort:
                vals = []
                for j, key_s in enumerate(sort):
                    if key_s.kind == "score":
                        vals.append(float(s))
                    elif key_s.kind == "doc":
                        vals.append(d)
                    else:
                        pos = next(k for k, (jj, _, _) in enumerate(sort_cols) if jj == j)
                        vals.append(_sort_render(row[nk + 3 + pos], sort_cols[pos][2], key_s.desc))
                hit["sort"] = vals
            grouped.setdefault(key, []).append(hit)
        for key, hits in grouped.items():
            max_score = max((h["_score"] for h in hits if h["_score"] is not None), default=None)
            out.setdefault(key, {})[node.name] = {
                "hits": {"total": {"value": totals[key], "relation": "eq"}, "max_score": max_score, "hits": hits}
            }

    # ---------------------------------------------------------------- buckets

    def _bucket(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        kind = node.type
        handler = getattr(self, f"_b_{kind}")
        handler(node, level, out)

    def _split_children(self, node: AggNode) -> tuple[list[AggNode], list[str], list[tuple[AggNode, int, int]]]:
        """Metric children computed in the parent's GROUP BY; the rest evaluated per chosen bucket."""
        exprs: list[str] = []
        slots: list[tuple[AggNode, int, int]] = []
        rest: list[AggNode] = []
        for child in node.children:
            if child.type in METRIC_TYPES and child.type != "top_hits":
                e = _metric_exprs(child, self.cols.get(id(child)))
                slots.append((child, len(exprs), len(e)))
                exprs.extend(e)
            else:
                rest.append(child)
        return rest, exprs, slots

    def _fill(self, slots: list[tuple[AggNode, int, int]], vals: Any) -> dict[str, Any]:
        return {c.name: _metric_result(c, self.cols.get(id(c)), vals[a : a + n]) for c, a, n in slots}

    def _new_key(self) -> str:
        self.level_no += 1
        return f"k{self.level_no}"

    def _child_level(self, level: Level, key_sql: str, keys: list[str], fams: list[str],
                     selected: list[tuple[Any, ...]] | None) -> Level:  # fmt: skip
        sql = key_sql
        if selected is not None:
            allkeys = level.keys + keys
            allfams = level.families + fams
            if not selected:
                sql = f"SELECT * FROM ({key_sql}) WHERE FALSE"
            else:
                values = ", ".join(
                    "(" + ", ".join(_key_literal(v, f) for v, f in zip(row, allfams)) + ")" for row in selected
                )
                cond = " AND ".join(f"__r.{k} IS NOT DISTINCT FROM __sel.s{i}" for i, k in enumerate(allkeys))
                names = ", ".join(f"s{i}" for i in range(len(allkeys)))
                sql = (
                    f"SELECT __r.* FROM ({key_sql}) __r SEMI JOIN (VALUES {values}) AS __sel({names}) ON {cond}"
                )
        return Level(sql, level.keys + keys, level.families + fams)

    def _keyed(self, level: Level, col: FieldCol, key: str, expr_of: Any, *, missing: Any = None) -> str:
        """Level SQL with one key per value of `col` (unnested when multi-valued)."""
        if col.multi:
            src = (
                f"SELECT __r.*, __u.__v AS __val FROM ({level.sql}) __r, "
                f"unnest(list_distinct(__r.{col.alias})) AS __u(__v)"
            )
            sql = f"SELECT * EXCLUDE (__val), {expr_of('__val')} AS {key} FROM ({src})"
            if missing is not None:
                sql += f" UNION ALL SELECT *, {missing} AS {key} FROM ({level.sql}) WHERE {col.alias} IS NULL"
            return sql
        if missing is not None:
            return f"SELECT *, coalesce({expr_of(col.alias)}, {missing}) AS {key} FROM ({level.sql})"
        return f"SELECT *, {expr_of(col.alias)} AS {key} FROM ({level.sql}) WHERE {col.alias} IS NOT NULL"

    def _b_terms(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]], rare: bool = False) -> None:
        p = node.params
        col: FieldCol | None = self.cols.get(id(node))
        allowed = {"field", "size", "shard_size", "order", "min_doc_count", "shard_min_doc_count", "missing",
                   "include", "exclude", "show_term_doc_count_error", "execution_hint", "collect_mode",
                   "value_type", "format", "max_doc_count", "precision"}  # fmt: skip
        for k in p:
            if k not in allowed:
                raise parsing_exception(f"[{node.type}] unknown field [{k}]")
        if col is None:
            for key in _parents(out, level, self):
                out.setdefault(key, {})[node.name] = _empty(node)
            if not level.keys:
                out.setdefault((), {})[node.name] = _empty(node)
            return
        size = _int(p, "size", 10) if not rare else 10_000
        if size < 0 or (size == 0 and not rare):
            raise bad_request(f"[size] must be greater than 0. Found [{size}] in [{node.name}]")
        min_doc = _int(p, "min_doc_count", 1, minimum=0)
        key = self._new_key()
        missing = _missing_sql(p.get("missing"), col) if "missing" in p else None
        ksql = self._keyed(level, col, key, lambda x: x, missing=missing)
        inc_exc = _include_exclude(p, col, key)
        if inc_exc:
            ksql = f"SELECT * FROM ({ksql}) WHERE {inc_exc}"
        order_sql, metric_exprs = self._order(node, col, key)
        parents = ", ".join(level.keys)
        part = f"PARTITION BY {parents} " if parents else ""
        group = ", ".join(level.keys + [key])
        mcols = "".join(f", {e} AS __m{i}" for i, e in enumerate(metric_exprs))
        having = f"HAVING count(*) >= {min_doc}" if min_doc > 1 else ""
        if rare:
            max_doc = _int(p, "max_doc_count", 1, minimum=1)
            having = f"HAVING count(*) <= {max_doc}"
        rest, xexprs, slots = self._split_children(node)
        xcols = "".join(f", {e} AS __x{i}" for i, e in enumerate(xexprs))
        xsel = "".join(f", __x{i}" for i in range(len(xexprs)))
        inner = f"SELECT {group}, count(*) AS __c{mcols}{xcols} FROM ({ksql}) GROUP BY {group} {having}"
        sql = (
            f"SELECT {group}, __c, sum(__c) OVER ({part}) AS __tot{xsel} FROM ({inner}) "
            f"QUALIFY row_number() OVER ({part}ORDER BY {order_sql}) <= {size} "
            f"ORDER BY {parents + ', ' if parents else ''}row_number() OVER ({part}ORDER BY {order_sql})"
        )
        rows = self.query(sql)
        nk = len(level.keys)
        selected = [tuple(r[: nk + 1]) for r in rows]
        child = self._child_level(level, ksql, [key], [col.family], selected) if rest else None
        sub = self.eval(rest, child) if child else {}
        for r in rows:
            if slots:
                sub.setdefault(tuple(r[: nk + 1]), {}).update(self._fill(slots, r[nk + 3 :]))
        grouped: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        totals: dict[tuple[Any, ...], int] = {}
        for r in rows:
            parent = tuple(r[:nk])
            kval, cnt, tot = r[nk], int(r[nk + 1]), int(r[nk + 2])
            totals[parent] = tot
            bucket = _render_key(kval, col, p.get("format"))
            bucket["doc_count"] = cnt
            bucket.update(_sub_results(node, sub.get(parent + (kval,), {})))
            grouped.setdefault(parent, []).append(bucket)
        if min_doc == 0 and not level.keys and col.family in ("str", "bool"):
            self._zero_terms(node, col, grouped, size)
        for parent in _parents(out, level, self) | set(grouped) | ({()} if not level.keys else set()):
            buckets = grouped.get(parent, [])
            shown = sum(b["doc_count"] for b in buckets)
            res: dict[str, Any] = {"doc_count_error_upper_bound": 0, "sum_other_doc_count": totals.get(parent, 0) - shown,
                                   "buckets": buckets}  # fmt: skip
            if rare:
                res = {"buckets": buckets}
            if node.meta is not None:
                res["meta"] = node.meta
            out.setdefault(parent, {})[node.name] = res

    def _b_rare_terms(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        node.params.setdefault("order", {"_count": "asc"})
        self._b_terms(node, level, out, rare=True)

    def _zero_terms(self, node: AggNode, col: FieldCol, grouped: dict[tuple[Any, ...], list[dict[str, Any]]],
                    size: int) -> None:  # fmt: skip
        """min_doc_count 0: terms of all documents of the indices, with 0 counts when not matching."""
        have = {b["key"] for b in grouped.get((), [])}
        parts = []
        for plan in self.b.plans:
            ref = plan.info.lookup(col.name)
            if ref is None:
                continue
            c = ref.sql
            parts.append(f"SELECT DISTINCT unnest({c}) AS v FROM {plan.rel}" if ref.multi else
                         f"SELECT DISTINCT {c} AS v FROM {plan.rel} WHERE {c} IS NOT NULL")  # fmt: skip
        if not parts:
            return
        rows = self.engine.query(f"SELECT DISTINCT v FROM ({' UNION ALL '.join(parts)}) ORDER BY v")
        buckets = grouped.setdefault((), [])
        for (v,) in rows:
            rendered = _render_key(v, col, None)
            if rendered["key"] not in have and len(buckets) < size:
                rendered["doc_count"] = 0
                rendered.update(_sub_results(node, {}))
                buckets.append(rendered)

    def _order(self, node: AggNode, col: FieldCol, key: str) -> tuple[str, list[str]]:
        spec = node.params.get("order", [{"_count": "desc"}])
        items = spec if isinstance(spec, list) else [spec]
        parts: list[str] = []
        metric_exprs: list[str] = []
        for item in items:
            if not isinstance(item, dict) or len(item) != 1:
                raise parsing_exception(f"[{node.type}] [order] must be an object with one key")
            path, direction = next(iter(item.items()))
            direction = str(direction).upper()
            if direction not in ("ASC", "DESC"):
                raise parsing_exception(f"Unknown order direction [{direction.lower()}]")
            if path == "_count":
                parts.append(f"__c {direction}")
            elif path in ("_key", "_term"):
                parts.append(f"{key} {direction}")
            else:
                name, _, stat = path.partition(".")
                name = name.split("[")[0]
                child = next((c for c in node.children if c.name == name), None)
                if child is None:
                    raise EsError(400, "aggregation_execution_exception",
                                  f"Invalid aggregator order path [{path}]. The provided aggregation [{name}] either does not exist, or is a pipeline aggregation and cannot be used to sort the buckets.")  # fmt: skip
                if child.type in BUCKET_TYPES and child.type in ("filter", "missing"):
                    raise unsupported(f"ordering terms by the single-bucket aggregation [{name}]")
                if child.type not in METRIC_TYPES or child.type == "top_hits":
                    raise EsError(400, "aggregation_execution_exception",
                                  f"Buckets can only be sorted on a sub-aggregator path that is built out of zero or more single-bucket aggregations within the path and a final single-bucket or a metrics aggregation at the path end. [{name}] is not single-bucket.")  # fmt: skip
                expr = _order_metric(child, self.cols.get(id(child)), stat)
                parts.append(f"__m{len(metric_exprs)} {direction} NULLS LAST")
                metric_exprs.append(expr)
        if not any(p.startswith(key + " ") for p in parts):
            parts.append(f"{key} ASC")
        return ", ".join(parts), metric_exprs

    def _b_multi_terms(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        cols: list[FieldCol | None] = self.cols[id(node)]
        p = node.params
        size = _int(p, "size", 10, minimum=1)
        if any(c is None for c in cols):
            for parent in _parents(out, level, self) | ({()} if not level.keys else set()):
                out.setdefault(parent, {})[node.name] = {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": []}
            return
        sql = level.sql
        keys = []
        for col in cols:
            assert col is not None
            key = self._new_key()
            sql = self._keyed(Level(sql, level.keys + keys, []), col, key, lambda x: x)
            keys.append(key)
        parents = ", ".join(level.keys)
        part = f"PARTITION BY {parents} " if parents else ""
        group = ", ".join(level.keys + keys)
        order = "__c DESC, " + ", ".join(f"{k} ASC" for k in keys)
        rows = self.query(
            f"SELECT {group}, __c, sum(__c) OVER ({part}) FROM (SELECT {group}, count(*) AS __c FROM ({sql}) GROUP BY {group}) "
            f"QUALIFY row_number() OVER ({part}ORDER BY {order}) <= {size} ORDER BY {parents + ', ' if parents else ''}{order}"
        )
        nk = len(level.keys)
        fams = [c.family for c in cols if c is not None]
        selected = [tuple(r[: nk + len(keys)]) for r in rows]
        child = self._child_level(level, sql, keys, fams, selected) if node.children else None
        sub = self.eval(node.children, child) if child else {}
        grouped: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        totals: dict[tuple[Any, ...], int] = {}
        for r in rows:
            parent = tuple(r[:nk])
            kvals = r[nk : nk + len(keys)]
            rendered = [_render_key(v, c, None) for v, c in zip(kvals, cols) if c is not None]
            bucket = {"key": [x["key"] for x in rendered],
                      "key_as_string": "|".join(str(x.get("key_as_string", x["key"])) for x in rendered),
                      "doc_count": int(r[nk + len(keys)])}  # fmt: skip
            totals[parent] = int(r[-1])
            bucket.update(_sub_results(node, sub.get(tuple(r[: nk + len(keys)]), {})))
            grouped.setdefault(parent, []).append(bucket)
        for parent in _parents(out, level, self) | set(grouped) | ({()} if not level.keys else set()):
            buckets = grouped.get(parent, [])
            out.setdefault(parent, {})[node.name] = {
                "doc_count_error_upper_bound": 0,
                "sum_other_doc_count": totals.get(parent, 0) - sum(b["doc_count"] for b in buckets),
                "buckets": buckets,
            }

    def _b_date_histogram(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        self._histogram(node, level, out, dates=True)

    def _b_histogram(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        self._histogram(node, level, out, dates=False)

    def _histogram(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]], *, dates: bool) -> None:
        p = node.params
        col: FieldCol | None = self.cols.get(id(node))
        allowed = {"field", "interval", "calendar_interval", "fixed_interval", "min_doc_count", "extended_bounds",
                   "hard_bounds", "offset", "time_zone", "format", "keyed", "order", "missing"}  # fmt: skip
        for k in p:
            if k not in allowed:
                raise parsing_exception(f"[{node.type}] unknown field [{k}]")
        min_doc = _int(p, "min_doc_count", 0, minimum=0)
        keyed = bool(p.get("keyed", False))
        if col is None:
            for parent in _parents(out, level, self) | ({()} if not level.keys else set()):
                out.setdefault(parent, {})[node.name] = {"buckets": {} if keyed else []}
            return
        if dates and col.family != "date":
            raise shard_failure(self.b.plans[0].info.concrete, "illegal_argument_exception",
                                f"Field [{col.name}] of type [{col.type}] is not supported for aggregation [date_histogram]")  # fmt: skip
        if not dates and col.family not in ("long", "double", "date"):
            raise shard_failure(self.b.plans[0].info.concrete, "illegal_argument_exception",
                                f"Field [{col.name}] of type [{col.type}] is not supported for aggregation [histogram]")  # fmt: skip
        key = self._new_key()
        tz = None
        if dates:
            try:
                tz = parse_timezone(str(p["time_zone"])) if p.get("time_zone") else None
            except DateFormatError as exc:
                raise bad_request(str(exc)) from None
            expr_of, step = _date_bucket(p, tz)
            fam = "long"
        else:
            interval = p.get("interval")
            try:
                interval = float(interval)
            except (TypeError, ValueError):
                raise bad_request(f"[interval] must be >0 for histogram aggregation [{node.name}]") from None
            if not interval > 0 or not math.isfinite(interval):
                raise bad_request(f"[interval] must be >0 for histogram aggregation [{node.name}]")
            off = _float(p, "offset", 0.0)
            conv = (lambda x: f"epoch_ms({x})::DOUBLE") if col.family == "date" else (lambda x: f"{x}::DOUBLE")
            expr_of = lambda x, i=interval, o=off, c=conv: f"(floor(({c(x)} - {o!r}) / {i!r}) * {i!r} + {o!r})"  # noqa: E731
            step = ("fixed", interval)
            fam = "double"
        ksql = self._keyed(level, col, key, expr_of)
        hard = p.get("hard_bounds")
        if hard:
            conds = []
            if hard.get("min") is not None:
                conds.append(f"{key} >= {self._bound(hard['min'], dates, tz)}")
            if hard.get("max") is not None:
                conds.append(f"{key} <= {self._bound(hard['max'], dates, tz)}")
            if conds:
                ksql = f"SELECT * FROM ({ksql}) WHERE {' AND '.join(conds)}"
        group = ", ".join(level.keys + [key])
        rest, xexprs, slots = self._split_children(node)
        xcols = "".join(f", {e}" for e in xexprs)
        rows = self.query(f"SELECT {group}, count(*){xcols} FROM ({ksql}) GROUP BY {group} ORDER BY {group}")
        nk = len(level.keys)
        counts: dict[tuple[Any, ...], dict[Any, int]] = {}
        for r in rows:
            counts.setdefault(tuple(r[:nk]), {})[r[nk]] = int(r[nk + 1])
        ext = p.get("extended_bounds")
        selected = [tuple(r[: nk + 1]) for r in rows if int(r[nk + 1]) >= max(min_doc, 1)]
        child = self._child_level(level, ksql, [key], level.families[:0] + [fam], selected) if rest else None
        sub = self.eval(rest, child) if child else {}
        for r in rows:
            if slots:
                sub.setdefault(tuple(r[: nk + 1]), {}).update(self._fill(slots, r[nk + 2 :]))
        fmt = p.get("format")
        for parent in _parents(out, level, self) | set(counts) | ({()} if not level.keys else set()):
            cmap = counts.get(parent, {})
            keys_all = sorted(cmap)
            if min_doc == 0:
                lo = keys_all[0] if keys_all else None
                hi = keys_all[-1] if keys_all else None
                if ext:
                    if ext.get("min") is not None:
                        emin = self._bound_value(ext["min"], dates, tz, expr_of)
                        lo = emin if lo is None else min(lo, emin)
                    if ext.get("max") is not None:
                        emax = self._bound_value(ext["max"], dates, tz, expr_of)
                        hi = emax if hi is None else max(hi, emax)
                if lo is not None and hi is not None:
                    keys_all = _fill(lo, hi, step, tz)
            buckets = []
            for k in keys_all:
                cnt = cmap.get(k, 0)
                if cnt < min_doc:
                    continue
                if dates:
                    b = {"key_as_string": format_ms(int(k), fmt, tz) if fmt or tz else format_ms(int(k)),
                         "key": int(k), "doc_count": cnt}  # fmt: skip
                else:
                    kv = float(k)
                    b = {"key": kv, "doc_count": cnt}
                    if col.family == "date":
                        b = {"key_as_string": format_ms(int(kv), fmt), "key": kv, "doc_count": cnt}
                b.update(_sub_results(node, sub.get(parent + (k,), {})))
                buckets.append(b)
            order = p.get("order")
            if order:
                buckets = _order_buckets(buckets, order)
            res: dict[str, Any] = {"buckets": {b.get("key_as_string", str(b["key"])): b for b in buckets} if keyed else buckets}
            if node.meta is not None:
                res["meta"] = node.meta
            out.setdefault(parent, {})[node.name] = res

    def _bound(self, value: Any, dates: bool, tz: dt.tzinfo | None) -> str:
        if not dates:
            return literal(_number_param(value, "bounds"))
        return str(self._date_value(value, tz))

    def _date_value(self, value: Any, tz: dt.tzinfo | None) -> int:
        from .datemath import DateMathError, evaluate

        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(value)
        try:
            return evaluate(str(value), self.engine.now(), tz=tz)
        except (DateMathError, DateFormatError):
            raise bad_request(f"failed to parse date field [{value}]") from None

    def _bound_value(self, value: Any, dates: bool, tz: dt.tzinfo | None, expr_of: Any) -> Any:
        if dates:
            ms = self._date_value(value, tz)
            rows = self.engine.query(f"SELECT {expr_of(f'epoch_ms({ms})')}")
            return rows[0][0]
        rows = self.engine.query(f"SELECT {expr_of(literal(_number_param(value, 'extended_bounds')))}")
        return rows[0][0]

    def _b_range(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]], kind: str = "range") -> None:
        p = node.params
        col: FieldCol | None = self.cols.get(id(node))
        ranges = p.get("ranges")
        if not isinstance(ranges, list) or not ranges:
            raise bad_request(f"No [ranges] specified for the [{node.name}] aggregation")
        keyed = bool(p.get("keyed", False))
        tz = None
        if p.get("time_zone"):
            try:
                tz = parse_timezone(str(p["time_zone"]))
            except DateFormatError as exc:
                raise bad_request(str(exc)) from None
        specs = []
        for i, r in enumerate(ranges):
            if not isinstance(r, dict):
                raise parsing_exception("[ranges] entries must be objects")
            lo, hi = r.get("from"), r.get("to")
            if kind == "ip_range" and "mask" in r:
                from ..layout import cidr_range

                bounds = cidr_range(str(r["mask"]))
                if bounds is None:
                    raise bad_request(f"[mask] is not a valid CIDR: [{r['mask']}]")
                specs.append((i, r, bounds[0], bounds[1] + 1))
                continue
            specs.append((i, r, self._range_bound(lo, col, kind, tz), self._range_bound(hi, col, kind, tz)))
        if col is None:
            for parent in _parents(out, level, self) | ({()} if not level.keys else set()):
                out.setdefault(parent, {})[node.name] = {"buckets": {} if keyed else []}
            return
        key = self._new_key()
        values = ", ".join(
            f"({i}, {_bound_sql(lo, col)}, {_bound_sql(hi, col)})" for i, _, lo, hi in specs
        )
        v = "__v"
        src = (f"SELECT __r.*, __u.__v FROM ({level.sql}) __r, unnest(__r.{col.alias}) AS __u(__v)"
               if col.multi else f"SELECT *, {col.alias} AS __v FROM ({level.sql})")  # fmt: skip
        ksql = (
            f"SELECT DISTINCT ON (__d, __i{''.join(', ' + k for k in level.keys)}, __rg.pos) __s0.* EXCLUDE (__v), __rg.pos AS {key} "
            f"FROM ({src}) __s0 JOIN (VALUES {values}) AS __rg(pos, lo, hi) "
            f"ON (__rg.lo IS NULL OR {v} >= __rg.lo) AND (__rg.hi IS NULL OR {v} < __rg.hi)"
        )
        group = ", ".join(level.keys + [key])
        rows = self.query(f"SELECT {group}, count(*) FROM ({ksql}) GROUP BY {group}")
        nk = len(level.keys)
        counts: dict[tuple[Any, ...], dict[int, int]] = {}
        for r in rows:
            counts.setdefault(tuple(r[:nk]), {})[int(r[nk])] = int(r[nk + 1])
        selected = [tuple(r[: nk + 1]) for r in rows]
        child = self._child_level(level, ksql, [key], ["long"], selected) if node.children else None
        sub = self.eval(node.children, child) if child else {}
        for parent in _parents(out, level, self) | set(counts) | ({()} if not level.keys else set()):
            buckets = []
            for i, r, lo, hi in specs:
                b = _range_bucket(r, lo, hi, col, kind, p.get("format"))
                b["doc_count"] = counts.get(parent, {}).get(i, 0)
                b.update(_sub_results(node, sub.get(parent + (i,), {})))
                buckets.append(b)
            res = {"buckets": {b["key"]: {k: v for k, v in b.items() if k != "key"} for b in buckets} if keyed else buckets}
            if node.meta is not None:
                res["meta"] = node.meta
            out.setdefault(parent, {})[node.name] = res

    def _b_date_range(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        self._b_range(node, level, out, kind="date_range")

    def _b_ip_range(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        self._b_range(node, level, out, kind="ip_range")

    def _range_bound(self, value: Any, col: FieldCol | None, kind: str, tz: dt.tzinfo | None) -> Any:
        if value is None:
            return None
        if col is not None and col.family == "date":
            return self._date_value(value, tz)
        if kind == "ip_range" or (col is not None and col.family == "ip"):
            num = ip_to_int(str(value))
            if num is None:
                raise bad_request(f"'{value}' is not an IP string literal.")
            return num
        return _number_param(value, "from/to")

    def _b_filter(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        alias = self.cols[id(node)]
        key = self._new_key()
        ksql = f"SELECT *, 0 AS {key} FROM ({level.sql}) WHERE {alias}"
        self._single(node, level, out, ksql, key)

    def _b_missing(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        col: FieldCol | None = self.cols.get(id(node))
        key = self._new_key()
        cond = "TRUE" if col is None else f"{col.alias} IS NULL"
        ksql = f"SELECT *, 0 AS {key} FROM ({level.sql}) WHERE {cond}"
        self._single(node, level, out, ksql, key)

    def _single(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]], ksql: str, key: str) -> None:
        group = ", ".join(level.keys + [key])
        rest, xexprs, slots = self._split_children(node)
        xcols = "".join(f", {e}" for e in xexprs)
        rows = self.query(f"SELECT {group}, count(*){xcols} FROM ({ksql}) GROUP BY {group}")
        nk = len(level.keys)
        counts = {tuple(r[:nk]): int(r[nk + 1]) for r in rows}
        child = self._child_level(level, ksql, [key], ["long"], None) if rest else None
        sub = self.eval(rest, child) if child else {}
        for r in rows:
            if slots:
                sub.setdefault(tuple(r[: nk + 1]), {}).update(self._fill(slots, r[nk + 2 :]))
        for parent in _parents(out, level, self) | set(counts) | ({()} if not level.keys else set()):
            res = {"doc_count": counts.get(parent, 0)}
            res.update(_sub_results(node, sub.get(parent + (0,), {})))
            if node.meta is not None:
                res["meta"] = node.meta
            out.setdefault(parent, {})[node.name] = res

    def _b_filters(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        p = node.params
        named: list[tuple[str, str]] = self.cols[id(node)]
        keyed = isinstance(p.get("filters"), dict) and p.get("keyed", True)
        key = self._new_key()
        branches = [f"SELECT *, {string(n)} AS {key} FROM ({level.sql}) WHERE {a}" for n, a in named]
        other = p.get("other_bucket_key") or ("_other_" if p.get("other_bucket") else None)
        if other:
            none_match = " AND ".join(f"NOT coalesce({a}, FALSE)" for _, a in named) or "TRUE"
            branches.append(f"SELECT *, {string(other)} AS {key} FROM ({level.sql}) WHERE {none_match}")
        ksql = " UNION ALL ".join(branches)
        group = ", ".join(level.keys + [key])
        rows = self.query(f"SELECT {group}, count(*) FROM ({ksql}) GROUP BY {group}")
        nk = len(level.keys)
        counts: dict[tuple[Any, ...], dict[str, int]] = {}
        for r in rows:
            counts.setdefault(tuple(r[:nk]), {})[r[nk]] = int(r[nk + 1])
        child = self._child_level(level, ksql, [key], ["str"], None) if node.children else None
        sub = self.eval(node.children, child) if child else {}
        names = [n for n, _ in named] + ([other] if other else [])
        for parent in _parents(out, level, self) | set(counts) | ({()} if not level.keys else set()):
            buckets_list = []
            for n in names:
                b = {"doc_count": counts.get(parent, {}).get(n, 0)}
                b.update(_sub_results(node, sub.get(parent + (n,), {})))
                buckets_list.append((n, b))
            res: dict[str, Any] = {"buckets": dict(buckets_list) if keyed else [({"key": n} | b) if isinstance(p.get("filters"), dict) else b for n, b in buckets_list]}
            if node.meta is not None:
                res["meta"] = node.meta
            out.setdefault(parent, {})[node.name] = res

    def _b_composite(self, node: AggNode, level: Level, out: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        if level.keys:
            raise EsError(400, "illegal_argument_exception",
                          f"[composite] aggregation cannot be used with a parent aggregation of type: [{'terms'}]")  # fmt: skip
        p = node.params
        size = _int(p, "size", 10, minimum=1)
        sources = self.cols[id(node)]
        sql = level.sql
        keys, fams, renders = [], [], []
        orders = []
        for sname, stype, sparams, col in sources:
            key = self._new_key()
            if col is None:
                sql = f"SELECT *, NULL AS {key} FROM ({sql})"
                keys.append(key)
                fams.append("str")
                renders.append((sname, stype, sparams, None))
                orders.append(f"{key} {str(sparams.get('order', 'asc')).upper()} NULLS FIRST")
                continue
            if stype == "terms":
                expr_of = lambda x: x  # noqa: E731
                fam = col.family
            elif stype == "date_histogram":
                tz = parse_timezone(str(sparams["time_zone"])) if sparams.get("time_zone") else None
                expr_of, _ = _date_bucket(sparams, tz)
                fam = "long"
            else:
                iv = _number_param(sparams.get("interval", 0), "interval")
                if not iv > 0:
                    raise bad_request("[interval] must be >0 for histogram aggregation")
                expr_of = lambda x, i=iv: f"(floor({x}::DOUBLE / {i!r}) * {i!r})"  # noqa: E731
                fam = "double"
            missing_bucket = bool(sparams.get("missing_bucket", False))
            lvl = Level(sql, level.keys + keys, [])
            sql = self._keyed(lvl, col, key, expr_of, missing="NULL" if missing_bucket else None)
            keys.append(key)
            fams.append(fam)
            renders.append((sname, stype, sparams, col))
            orders.append(f"{key} {str(sparams.get('order', 'asc')).upper()} NULLS FIRST")
        after = p.get("after")
        where = ""
        if after is not None:
            if not isinstance(after, dict):
                raise parsing_exception("[composite] [after] must be an object")
            conds = []
            lits = []
            for (sname, stype, sparams, col), key, fam in zip(renders, keys, fams):
                if sname not in after:
                    raise bad_request(f"[after] has no value for source [{sname}]")
                lits.append(_after_key_literal(after[sname], col, stype))
            for i in range(len(keys)):
                terms = [f"{keys[j]} IS NOT DISTINCT FROM {lits[j]}" for j in range(i)]
                desc = "DESC" in orders[i]
                terms.append(f"{keys[i]} {'<' if desc else '>'} {lits[i]}")
                conds.append("(" + " AND ".join(terms) + ")")
            where = "WHERE " + " OR ".join(conds)
        group = ", ".join(keys)
        rows = self.query(
            f"SELECT {group}, count(*) FROM ({sql}) {where} GROUP BY {group} ORDER BY {', '.join(orders)} LIMIT {size}"
        )
        selected = [tuple(r[: len(keys)]) for r in rows]
        child = self._child_level(level, sql, keys, fams, selected) if node.children else None
        sub = self.eval(node.children, child) if child else {}
        buckets = []
        for r in rows:
            kd = {}
            for (sname, stype, sparams, col), v in zip(renders, r[: len(keys)]):
                kd[sname] = _composite_value(v, col, stype)
            b = {"key": kd, "doc_count": int(r[len(keys)])}
            b.update(_sub_results(node, sub.get(tuple(r[: len(keys)]), {})))
            buckets.append(b)
        res: dict[str, Any] = {}
        if buckets:
            res["after_key"] = buckets[-1]["key"]
        res["buckets"] = buckets
        out.setdefault((), {})[node.name] = res

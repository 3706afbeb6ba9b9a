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
from ..layout import DOC_COL, int_to_ip, ip_to_int
from ..mappings import DATE_TYPES, FLOAT_TYPES, INTEGER_TYPES, TEXT_TYPES
from ..sqlutil import ident, literal, string
from .errors import EsError, bad_request, parsing_exception, shard_failure, unsupported
from .query import compile_query

if TYPE_CHECKING:
    from ..engine import Engine
    from .search import Plan

BUCKET_TYPES = {
    "terms", "date_histogram", "histogram", "range", "date_range", "ip_range", "filter", "filters",
    "missing", "composite", "multi_terms", "rare_terms", "global",
}  # fmt: skip
METRIC_TYPES = {
    "min", "max", "avg", "sum", "value_count", "cardinality", "stats", "extended_stats", "percentiles",
    "median_absolute_deviation", "top_hits",
}  # fmt: skip
PIPELINE_TYPES = {
    "avg_bucket", "max_bucket", "min_bucket", "sum_bucket", "stats_bucket", "extended_stats_bucket",
    "percentiles_bucket", "bucket_script", "bucket_selector", "bucket_sort", "cumulative_sum", "derivative",
    "moving_fn", "serial_diff", "cumulative_cardinality", "normalize", "inference",
}  # fmt: skip
UNSUPPORTED_AGGS = {
    "significant_terms", "significant_text", "auto_date_histogram", "variable_width_histogram", "sampler",
    "diversified_sampler", "adjacency_matrix", "geo_distance", "geohash_grid", "geotile_grid", "geo_bounds",
    "geo_centroid", "geo_line", "nested", "reverse_nested", "children", "parent", "scripted_metric",
    "weighted_avg", "percentile_ranks", "boxplot", "t_test", "top_metrics", "matrix_stats", "string_stats",
    "rate", "random_sampler", "categorize_text", "frequent_item_sets", "time_series", "ip_prefix",
}  # fmt: skip

CALENDAR = {
    "minute": "minute", "1m": "minute", "hour": "hour", "1h": "hour", "day": "day", "1d": "day",
    "week": "week", "1w": "week", "month": "month", "1M": "month", "quarter": "quarter", "1q": "quarter",
    "year": "year", "1y": "year",
}  # fmt: skip
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def _int(params: dict[str, Any], key: str, default: int, *, minimum: int | None = None) -> int:
    """An integer aggregation parameter, or the parsing error Elasticsearch gives."""
    value = params.get(key, default)
    if isinstance(value, bool) or value is None:
        raise parsing_exception(f"[{key}] must be an integer, got [{value}]")
    try:
        num = int(value) if not isinstance(value, float) else (int(value) if value.is_integer() else None)
    except (TypeError, ValueError, OverflowError):
        num = None
    if num is None:
        raise parsing_exception(f"[{key}] must be an integer, got [{value}]")
    if minimum is not None and num < minimum:
        raise bad_request(f"[{key}] must be greater than or equal to {minimum}, got [{num}]")
    if num > 1_000_000_000:
        raise bad_request(f"[{key}] is too large: [{num}]")
    return num


def _float(params: dict[str, Any], key: str, default: float) -> float:
    value = params.get(key, default)
    if isinstance(value, bool) or value is None:
        raise parsing_exception(f"[{key}] must be a number, got [{value}]")
    try:
        num = float(value)
    except (TypeError, ValueError):
        raise parsing_exception(f"[{key}] must be a number, got [{value}]") from None
    if not math.isfinite(num):
        raise parsing_exception(f"[{key}] must be a finite number, got [{value}]")
    return num


def _number_param(value: Any, what: str) -> float:
    try:
        num = float(value)
    except (TypeError, ValueError):
        raise bad_request(f"[{what}] must be a number, got [{value}]") from None
    if not math.isfinite(num):
        raise bad_request(f"[{what}] must be a finite number, got [{value}]")
    return num


@dataclass
class AggNode:
    name: str
    type: str
    params: dict[str, Any]
    children: list[AggNode] = field(default_factory=list)
    meta: Any = None


def parse_aggs(spec: Any, path: str = "") -> list[AggNode]:
    if not isinstance(spec, dict):
        raise parsing_exception(f"Expected [START_OBJECT] under [aggregations], but got a {type(spec).__name__}")
    nodes = []
    for name, body in spec.items():
        if not re.match(r"^[^\[\]>]+$", name):
            raise parsing_exception(f"Invalid aggregation name [{name}]. Aggregation names can contain any character except '[', ']', and '>'")
        if not isinstance(body, dict):
            raise parsing_exception(f"Expected [START_OBJECT] under [{name}], but got a [{type(body).__name__}] in [{name}]")
        kinds = [k for k in body if k not in ("aggs", "aggregations", "meta")]
        if not kinds:
            raise parsing_exception(f"Missing definition for aggregation [{name}]")
        if len(kinds) > 1:
            raise parsing_exception(f"Found two aggregation type definitions in [{name}]: [{kinds[0]}] and [{kinds[1]}]")
        kind = kinds[0]
        if kind in UNSUPPORTED_AGGS or kind in PIPELINE_TYPES:
            raise unsupported(f"[{kind}] aggregation")
        if kind not in BUCKET_TYPES and kind not in METRIC_TYPES:
            raise parsing_exception(f"Unknown aggregation type [{kind}] did you mean [terms]?")
        params = body[kind]
        if not isinstance(params, dict):
            raise parsing_exception(f"Expected [START_OBJECT] under [{kind}], but got a [{type(params).__name__}] in [{name}]")
        sub = body.get("aggs", body.get("aggregations"))
        children = parse_aggs(sub, f"{path}{name}>") if sub is not None else []
        if children and kind in METRIC_TYPES:
            raise EsError(400, "aggregation_initialization_exception",
                          f"Aggregator [{name}] of type [{kind}] cannot accept sub-aggregations")  # fmt: skip
        nodes.append(AggNode(name, kind, params, children, body.get("meta")))
    return nodes


# ---------------------------------------------------------------------------- the docs relation


@dataclass
class FieldCol:
    alias: str
    name: str
    type: str  # es type (common across indices)
    family: str  # str | long | double | date | ip | bool
    multi: bool


def _family(es_type: str) -> str:
    if es_type in INTEGER_TYPES:
        return "long"
    if es_type in FLOAT_TYPES:
        return "double"
    if es_type in DATE_TYPES:
        return "date"
    if es_type == "ip":
        return "ip"
    if es_type == "boolean":
        return "bool"
    return "str"


_FAMILY_SQL = {"str": "VARCHAR", "long": "BIGINT", "double": "DOUBLE", "date": "TIMESTAMP", "ip": "UHUGEINT", "bool": "BOOLEAN"}


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
                    c = ident(ref.column)
                    cols.append(f"CASE WHEN {c} IS NULL THEN NULL ELSE [{c}::{_FAMILY_SQL[col.family]}] END AS {col.alias}")
                else:
                    cols.append(f"{ident(ref.column)}::{target} AS {col.alias}")
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
            c = ident(ref.column)
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


# ---------------------------------------------------------------------------- helpers


def _parents(out: dict[tuple[Any, ...], dict[str, Any]], level: Level, runner: _Runner) -> set[tuple[Any, ...]]:
    """Parent buckets known so far at this level (so empty sub-results still appear)."""
    n = len(level.keys)
    return {k for k in out if len(k) == n}


def _sub_results(node: AggNode, values: dict[str, Any]) -> dict[str, Any]:
    res = {}
    for child in node.children:
        res[child.name] = values.get(child.name, _empty(child))
    return res


def _empty(node: AggNode) -> dict[str, Any]:
    t = node.type
    res: dict[str, Any]
    if t in ("terms", "multi_terms"):
        res = {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": []}
    elif t in ("rare_terms",):
        res = {"buckets": []}
    elif t in ("date_histogram", "histogram", "range", "date_range", "ip_range"):
        res = {"buckets": []}
    elif t == "composite":
        res = {"buckets": []}
    elif t in ("filter", "missing", "global"):
        res = {"doc_count": 0}
        res.update(_sub_results(node, {}))
    elif t == "filters":
        res = {"buckets": {}}
    elif t in ("sum", "value_count", "cardinality"):
        res = {"value": 0 if t != "sum" else 0.0}
    elif t == "stats":
        res = {"count": 0, "min": None, "max": None, "avg": None, "sum": 0.0}
    elif t == "extended_stats":
        res = {"count": 0, "min": None, "max": None, "avg": None, "sum": 0.0, "sum_of_squares": None,
               "variance": None, "variance_population": None, "variance_sampling": None, "std_deviation": None,
               "std_deviation_population": None, "std_deviation_sampling": None,
               "std_deviation_bounds": {"upper": None, "lower": None, "upper_population": None,
                                        "lower_population": None, "upper_sampling": None, "lower_sampling": None}}  # fmt: skip
    elif t == "percentiles":
        res = {"values": {_pct_key(q): None for q in _percents(node.params)}}
    elif t == "top_hits":
        res = {"hits": {"total": {"value": 0, "relation": "eq"}, "max_score": None, "hits": []}}
    else:
        res = {"value": None}
    if node.meta is not None:
        res["meta"] = node.meta
    return res


def _percents(params: dict[str, Any]) -> list[float]:
    pcts = params.get("percents", [1, 5, 25, 50, 75, 95, 99])
    if not isinstance(pcts, list) or not all(isinstance(x, (int, float)) and 0 <= x <= 100 for x in pcts):
        raise bad_request("[percents] must be numbers between 0 and 100")
    return [float(x) for x in pcts]


def _pct_key(q: float) -> str:
    return repr(float(q))


def _value_expr(col: FieldCol) -> str:
    """Numeric value of a metric field (dates as epoch millis)."""
    return f"epoch_ms({col.alias})::DOUBLE" if col.family == "date" else f"{col.alias}::DOUBLE"


def _check_numeric(node: AggNode, col: FieldCol) -> None:
    if col.family not in ("long", "double", "date", "bool") and node.type not in ("value_count", "cardinality"):
        raise EsError(
            400, "illegal_argument_exception",
            f"Field [{col.name}] of type [{col.type}] is not supported for aggregation [{node.type}]",
        )  # fmt: skip


def _metric_exprs(node: AggNode, col: FieldCol | None) -> list[str]:
    t = node.type
    if col is None:
        return []
    if t in ("value_count",):
        return [f"sum(len({col.alias}))" if col.multi else f"count({col.alias})"]
    if t == "cardinality":
        return [f"len(list_distinct(flatten(list({col.alias}))))" if col.multi else f"count(DISTINCT {col.alias})"]
    _check_numeric(node, col)
    if col.multi:
        v = f"flatten(list({'list_transform(' + col.alias + ', lambda __x: epoch_ms(__x)::DOUBLE)' if col.family == 'date' else col.alias + '::DOUBLE[]'}))"
        aggs = {
            "min": [f"list_min({v})"], "max": [f"list_max({v})"], "avg": [f"list_avg({v})"],
            "sum": [f"coalesce(list_sum({v}), 0)"],
            "stats": [f"len({v})", f"list_min({v})", f"list_max({v})", f"list_avg({v})", f"coalesce(list_sum({v}), 0)"],
            "extended_stats": [f"len({v})", f"list_min({v})", f"list_max({v})", f"list_avg({v})", f"coalesce(list_sum({v}), 0)",
                               f"list_sum(list_transform({v}, lambda __y: __y * __y))", f"list_var_pop({v})", f"list_var_samp({v})"],
            "percentiles": [f"list_aggregate({v}, 'quantile_cont', {[q / 100 for q in _percents(node.params)]})"],
            "median_absolute_deviation": [f"list_aggregate({v}, 'mad')"],
        }  # fmt: skip
        return aggs[t]
    v = _value_expr(col)
    aggs = {
        "min": [f"min({v})"], "max": [f"max({v})"], "avg": [f"avg({v})"], "sum": [f"coalesce(sum({v}), 0)"],
        "stats": [f"count({v})", f"min({v})", f"max({v})", f"avg({v})", f"coalesce(sum({v}), 0)"],
        "extended_stats": [f"count({v})", f"min({v})", f"max({v})", f"avg({v})", f"coalesce(sum({v}), 0)",
                           f"sum({v} * {v})", f"var_pop({v})", f"var_samp({v})"],
        "percentiles": [f"quantile_cont({v}, {[q / 100 for q in _percents(node.params)]})"],
        "median_absolute_deviation": [f"mad({v})"],
    }  # fmt: skip
    return aggs[t]


def _order_metric(node: AggNode, col: FieldCol | None, stat: str) -> str:
    exprs = _metric_exprs(node, col)
    if not exprs:
        return "NULL"
    if node.type in ("stats", "extended_stats"):
        names = ["count", "min", "max", "avg", "sum"]
        if stat not in names:
            raise EsError(400, "aggregation_execution_exception", f"Invalid aggregation order path [{node.name}.{stat}]")
        return exprs[names.index(stat)]
    if node.type == "percentiles":
        raise unsupported("ordering buckets by a percentiles aggregation")
    return exprs[0]


def _num(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f


def _metric_result(node: AggNode, col: FieldCol | None, vals: Any) -> dict[str, Any]:
    t = node.type
    if col is None:
        return _empty(node)
    res: dict[str, Any]
    as_date = col.family == "date"
    fmt = node.params.get("format")
    if t in ("value_count", "cardinality"):
        res = {"value": int(vals[0] or 0)}
    elif t in ("min", "max", "avg", "sum", "median_absolute_deviation"):
        value = _num(vals[0])
        if t == "sum" and value is None:
            value = 0.0
        res = {"value": value}
        if as_date and value is not None and t in ("min", "max", "avg"):
            res["value_as_string"] = format_ms(int(value), fmt)
    elif t in ("stats", "extended_stats"):
        count = int(vals[0] or 0)
        res = {"count": count, "min": _num(vals[1]), "max": _num(vals[2]), "avg": _num(vals[3]),
               "sum": _num(vals[4]) or 0.0}  # fmt: skip
        if t == "extended_stats":
            var_pop = _num(vals[6])
            var_samp = _num(vals[7])
            sd = math.sqrt(var_pop) if var_pop is not None else None
            sds = math.sqrt(var_samp) if var_samp is not None else None
            avg = res["avg"]
            sigma = _float(node.params, "sigma", 2.0)
            res.update({
                "sum_of_squares": _num(vals[5]), "variance": var_pop, "variance_population": var_pop,
                "variance_sampling": var_samp, "std_deviation": sd, "std_deviation_population": sd,
                "std_deviation_sampling": sds,
                "std_deviation_bounds": {
                    "upper": avg + sigma * sd if avg is not None and sd is not None else None,
                    "lower": avg - sigma * sd if avg is not None and sd is not None else None,
                    "upper_population": avg + sigma * sd if avg is not None and sd is not None else None,
                    "lower_population": avg - sigma * sd if avg is not None and sd is not None else None,
                    "upper_sampling": avg + sigma * sds if avg is not None and sds is not None else None,
                    "lower_sampling": avg - sigma * sds if avg is not None and sds is not None else None,
                },
            })  # fmt: skip
        if as_date and count:
            for k in ("min", "max", "avg"):
                if res[k] is not None:
                    res[f"{k}_as_string"] = format_ms(int(res[k]), fmt)
    elif t == "percentiles":
        pcts = _percents(node.params)
        got = vals[0] or [None] * len(pcts)
        values = {_pct_key(q): _num(v) for q, v in zip(pcts, got)}
        if node.params.get("keyed", True) is False:
            res = {"values": [{"key": float(q), "value": values[_pct_key(q)]} for q in pcts]}
        else:
            res = {"values": values}
    else:
        res = {"value": None}
    if node.meta is not None:
        res["meta"] = node.meta
    return res


def _render_key(value: Any, col: FieldCol, fmt: str | None) -> dict[str, Any]:
    fam = col.family
    if fam == "date":
        from ..layout import datetime_to_ms

        ms = datetime_to_ms(value) if isinstance(value, dt.datetime) else int(value)
        return {"key": ms, "key_as_string": format_ms(ms, fmt)}
    if fam == "ip":
        return {"key": int_to_ip(int(value))}
    if fam == "bool":
        return {"key": 1 if value else 0, "key_as_string": "true" if value else "false"}
    if fam == "long":
        return {"key": int(value)}
    if fam == "double":
        return {"key": float(value)}
    return {"key": value}


def _composite_value(value: Any, col: FieldCol | None, stype: str) -> Any:
    if value is None or col is None:
        return None
    if stype == "date_histogram":
        return int(value)
    if stype == "histogram":
        return float(value)
    return _render_key(value, col, None)["key"]


def _after_key_literal(value: Any, col: FieldCol | None, stype: str) -> str:
    if value is None:
        return "NULL"
    if col is None:
        return string(str(value))
    if stype == "date_histogram":
        return str(int(value))
    if stype == "histogram":
        return literal(float(value))
    return _key_literal(_parse_key(value, col), col.family)


def _parse_key(value: Any, col: FieldCol) -> Any:
    if col.family == "ip":
        return ip_to_int(str(value))
    if col.family == "date":
        from ..layout import ms_to_datetime

        return ms_to_datetime(int(value))
    if col.family == "bool":
        return bool(value) if not isinstance(value, str) else value == "true"
    return value


def _key_literal(value: Any, fam: str) -> str:
    if value is None:
        return "NULL"
    if fam == "ip":
        return f"'{int(value)}'::UHUGEINT"
    if fam == "date":
        if isinstance(value, dt.datetime):
            return literal(value)
        from ..layout import ms_to_datetime

        return literal(ms_to_datetime(int(value)))
    if fam == "long":
        return f"{int(value)}::BIGINT"
    if fam == "double":
        return literal(float(value))
    if fam == "bool":
        return "TRUE" if value else "FALSE"
    return literal(value)


def _missing_sql(value: Any, col: FieldCol) -> str:
    if col.family == "ip":
        num = ip_to_int(str(value))
        if num is None:
            raise bad_request(f"'{value}' is not an IP string literal.")
        return f"'{num}'::UHUGEINT"
    if col.family == "date":
        from ..layout import ms_to_datetime, parse_date_ms

        ms = parse_date_ms(value)
        if ms is None:
            raise bad_request(f"failed to parse date field [{value}]")
        return literal(ms_to_datetime(ms))
    if col.family in ("long", "double"):
        try:
            return literal(float(value)) if col.family == "double" else literal(int(float(value)))
        except (TypeError, ValueError):
            raise bad_request(f"failed to parse missing value [{value}]") from None
    if col.family == "bool":
        return "TRUE" if str(value).lower() == "true" else "FALSE"
    return string(str(value))


def _include_exclude(p: dict[str, Any], col: FieldCol, key: str) -> str:
    conds = []
    for name, neg in (("include", False), ("exclude", True)):
        spec = p.get(name)
        if spec is None:
            continue
        if isinstance(spec, str):
            if col.family != "str":
                raise bad_request(f"Aggregation [{name}] regex only applies to string fields")
            from .lucene_regex import to_re2

            cond = f"regexp_full_match({key}, {string(to_re2(spec))})"
        elif isinstance(spec, list):
            lits = ", ".join(_key_literal(_parse_key(v, col), col.family) for v in spec) or "NULL"
            cond = f"{key} IN ({lits})"
        elif isinstance(spec, dict) and "partition" in spec:
            raise unsupported(f"terms [{name}] partitions")
        else:
            raise parsing_exception(f"[{name}] must be a string or an array")
        conds.append(f"NOT coalesce({cond}, FALSE)" if neg else f"coalesce({cond}, FALSE)")
    return " AND ".join(conds)


def _date_bucket(p: dict[str, Any], tz: dt.tzinfo | None) -> tuple[Any, tuple[str, Any]]:
    """(SQL expression of a bucket start in epoch ms, step) for date_histogram parameters."""
    cal = p.get("calendar_interval")
    fixed = p.get("fixed_interval")
    legacy = p.get("interval")
    if sum(x is not None for x in (cal, fixed, legacy)) != 1:
        if cal is not None and fixed is not None:
            raise bad_request("Cannot use [fixed_interval] with [calendar_interval] configuration option.")
        raise bad_request("Invalid interval specified, must be non-null and non-empty")
    if legacy is not None:
        if str(legacy) in CALENDAR:
            cal = legacy
        else:
            fixed = legacy
    offset_ms = _parse_duration(str(p.get("offset", "0ms")), allow_sign=True) if p.get("offset") else 0
    tzname = _tz_sql_name(tz)
    if cal is not None:
        unit = CALENDAR.get(str(cal))
        if unit is None:
            raise bad_request(f"The supplied interval [{cal}] could not be parsed as a calendar interval.")

        fixed_off = None
        if isinstance(tz, dt.timezone) and tz != dt.timezone.utc:
            off = tz.utcoffset(None)
            fixed_off = int(off.total_seconds() * 1000) if off else 0

        def expr(x: str, unit: str = unit) -> str:
            if fixed_off is not None:
                shift = fixed_off - offset_ms
                local = f"({x} + to_milliseconds({shift}))"
                return f"(epoch_ms(date_trunc('{unit}', {local})) - ({shift}))"
            if tzname is None:
                inner = f"date_trunc('{unit}', {x} - to_milliseconds({offset_ms})) + to_milliseconds({offset_ms})"
                return f"epoch_ms({inner})"
            local = f"timezone({string(tzname)}, {x}::TIMESTAMPTZ)"
            trunc = f"date_trunc('{unit}', {local} - to_milliseconds({offset_ms})) + to_milliseconds({offset_ms})"
            return f"epoch_ms(timezone({string(tzname)}, {trunc}))"

        return expr, ("calendar", unit)
    assert fixed is not None
    if str(fixed) in ("1M", "1q", "1y", "month", "quarter", "year", "week", "1w") and p.get("fixed_interval") is not None:
        raise bad_request(f"failed to parse setting [date_histogram.fixedInterval] with value [{fixed}] as a time value: unit is missing or unrecognized")
    step_ms = _parse_duration(str(fixed))
    tz_off = 0
    if tz is not None:
        off = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc).astimezone(tz).utcoffset()
        tz_off = int(off.total_seconds() * 1000) if off else 0
    total_off = offset_ms - tz_off

    def fexpr(x: str) -> str:
        return f"((floor((epoch_ms({x}) - {total_off}) / {step_ms}) * {step_ms}) + {total_off})::BIGINT"

    return fexpr, ("fixed", step_ms)


def _tz_sql_name(tz: dt.tzinfo | None) -> str | None:
    if tz is None or tz == dt.timezone.utc:
        return None
    key = getattr(tz, "key", None)
    if key:
        return key
    off = tz.utcoffset(None)
    if off is None:
        return None
    total = int(off.total_seconds() // 60)
    sign = "+" if total >= 0 else "-"
    hh, mm = divmod(abs(total), 60)
    return f"{sign}{hh:02d}:{mm:02d}"


_DURATION = re.compile(r"^([+-]?)(\d+)(ms|s|m|h|d|nanos|micros)$")


def _parse_duration(text: str, allow_sign: bool = False) -> int:
    m = _DURATION.match(text.strip())
    if not m or (m.group(1) and not allow_sign):
        raise bad_request(f"failed to parse setting [interval] with value [{text}] as a time value: unit is missing or unrecognized")
    unit = m.group(3)
    n = int(m.group(2))
    ms = n * _UNIT_MS[unit] if unit in _UNIT_MS else (n // 1_000_000 if unit == "nanos" else n // 1000)
    if ms <= 0 and not allow_sign:
        raise bad_request(f"[interval] must be positive, got [{text}]")
    return -ms if m.group(1) == "-" else ms


def _fill(lo: Any, hi: Any, step: tuple[str, Any], tz: dt.tzinfo | None) -> list[Any]:
    kind, value = step
    keys = []
    if kind == "fixed":
        k = lo
        n = 0
        while k <= hi and n < 100_000:
            keys.append(k)
            k = k + value
            n += 1
        return keys
    from ..layout import ms_to_datetime

    cur = ms_to_datetime(int(lo)).replace(tzinfo=dt.timezone.utc)
    if tz is not None:
        cur = cur.astimezone(tz)
    n = 0
    while n < 100_000:
        from ..layout import datetime_to_ms

        ms = datetime_to_ms(cur)
        if ms > hi:
            break
        keys.append(ms)
        cur = _calendar_next(cur, value)
        n += 1
    return keys


def _calendar_next(cur: dt.datetime, unit: str) -> dt.datetime:
    if unit == "minute":
        return cur + dt.timedelta(minutes=1)
    if unit == "hour":
        return cur + dt.timedelta(hours=1)
    if unit == "day":
        naive = cur.replace(tzinfo=None) + dt.timedelta(days=1)
        return _relocalize(naive, cur.tzinfo)
    if unit == "week":
        naive = cur.replace(tzinfo=None) + dt.timedelta(days=7)
        return _relocalize(naive, cur.tzinfo)
    months = {"month": 1, "quarter": 3, "year": 12}[unit]
    total = cur.year * 12 + cur.month - 1 + months
    naive = cur.replace(tzinfo=None, year=total // 12, month=total % 12 + 1)
    return _relocalize(naive, cur.tzinfo)


def _relocalize(naive: dt.datetime, tz: dt.tzinfo | None) -> dt.datetime:
    return naive.replace(tzinfo=tz or dt.timezone.utc)


def _order_buckets(buckets: list[dict[str, Any]], order: Any) -> list[dict[str, Any]]:
    items = order if isinstance(order, list) else [order]
    for item in reversed(items):
        (path, direction), = item.items()
        rev = str(direction).lower() == "desc"
        if path == "_key":
            buckets = sorted(buckets, key=lambda b: b["key"], reverse=rev)
        elif path == "_count":
            buckets = sorted(buckets, key=lambda b: b["doc_count"], reverse=rev)
        else:
            name, _, stat = path.partition(".")
            buckets = sorted(buckets, key=lambda b: (b.get(name, {}).get(stat or "value") is None,
                                                      b.get(name, {}).get(stat or "value") or 0), reverse=rev)  # fmt: skip
    return buckets


def _bound_sql(value: Any, col: FieldCol | None) -> str:
    if value is None:
        return "NULL"
    if col is not None and col.family == "date":
        from ..layout import ms_to_datetime

        return literal(ms_to_datetime(int(value)))
    if col is not None and col.family == "ip":
        return f"'{int(value)}'::UHUGEINT"
    return literal(float(value))


def _range_bucket(r: dict[str, Any], lo: Any, hi: Any, col: FieldCol | None, kind: str, fmt: str | None) -> dict[str, Any]:
    def show(v: Any) -> str:
        if v is None:
            return "*"
        if col is not None and col.family == "date":
            return format_ms(int(v), fmt)
        if kind == "ip_range" or (col is not None and col.family == "ip"):
            return int_to_ip(int(v))
        return repr(float(v))

    key = r.get("key") or (r["mask"] if "mask" in r else f"{show(lo)}-{show(hi)}")
    b: dict[str, Any] = {"key": key}
    is_date = col is not None and col.family == "date"
    is_ip = kind == "ip_range" or (col is not None and col.family == "ip")
    if lo is not None:
        if is_ip:
            b["from"] = int_to_ip(int(lo))
        else:
            b["from"] = float(lo)
            if is_date:
                b["from_as_string"] = format_ms(int(lo), fmt)
    if hi is not None:
        if is_ip:
            b["to"] = int_to_ip(min(int(hi), 2**128 - 1))
        else:
            b["to"] = float(hi)
            if is_date:
                b["to_as_string"] = format_ms(int(hi), fmt)
    return b


_SENTINEL = {
    "str": ("''", "'\U0010ffff'"),
    "long": ("(-9223372036854775808)::BIGINT", "9223372036854775807::BIGINT"),
    "double": ("'-inf'::DOUBLE", "'inf'::DOUBLE"),
    "date": ("TIMESTAMP '0001-01-01'", "TIMESTAMP '9999-12-31'"),
    "ip": ("'0'::UHUGEINT", f"'{2**128 - 1}'::UHUGEINT"),
    "bool": ("FALSE", "TRUE"),
}


def _sort_render(value: Any, col: FieldCol | None, desc: bool) -> Any:
    if value is None:
        return None
    if isinstance(value, list):
        value = max(value) if desc else min(value)
    if col is None:
        return value
    if col.family == "date":
        from ..layout import datetime_to_ms

        return datetime_to_ms(value)
    if col.family == "ip":
        return int_to_ip(int(value))
    return value

"""The `docs` relation an aggregation tree runs on: the matching documents of every index with a
column per field the tree uses and one per filter query it holds."""

from __future__ import annotations

from typing import Any

from ..layout import DOC_COL
from ..limits import MAX_FILTERS
from ..mappings import TEXT_TYPES
from ..sqlutil import ident
from .aggs_parse import METRIC_TYPES, AggNode
from .aggs_values import FAMILY_SQL, FieldCol, family_of
from .errors import bad_request, parsing_exception, shard_failure, unsupported
from .plan import Plan, filtered, parse_sort
from .query import compile_query


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
        fams = {family_of(t) for t in types}
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
        for pos, plan in enumerate(self.plans):
            cols = [f"{pos} AS __i", f"{ident(DOC_COL)} AS __d"]
            if self.need_score:
                cols.append(f"({plan.score})::DOUBLE AS __s")
            for name, col in self.fields.items():
                ref = plan.info.lookup(name)
                target = FAMILY_SQL[col.family] + ("[]" if col.multi else "")
                if ref is None:
                    cols.append(f"NULL::{target} AS {col.alias}")
                elif col.multi and not ref.multi:
                    c = ref.sql
                    cols.append(f"CASE WHEN {c} IS NULL THEN NULL ELSE [{c}::{FAMILY_SQL[col.family]}] END AS {col.alias}")
                else:
                    cols.append(f"{ref.sql}::{target} AS {col.alias}")
            for alias, q in self.queries:
                cols.append(f"({compile_query(q, plan.ctx, False).where}) AS {alias}")
            if self.source_cols is not None:
                cols.append(f"{ident('_id')} AS __id")
            parts.append(f"SELECT {', '.join(cols)} FROM {plan.rel} WHERE {filtered(plan, 'TRUE', self.min_score)}")
        return " UNION ALL ".join(parts)



def prepare(builder: DocsBuilder, cols: dict[int, Any], nodes: list[AggNode]) -> None:
    """Resolve the fields and filters of the whole tree up front (one docs relation for all), into
    the builder, and each node's prepared fields or filter aliases into `cols` (by id(node))."""
    for node in nodes:
        p = node.params
        t = node.type
        if t in ("filter",):
            cols[id(node)] = builder.query(p)
        elif t == "filters":
            filters = p.get("filters")
            if isinstance(filters, (dict, list)) and len(filters) > MAX_FILTERS:
                # each filter is a UNION branch over the documents: thousands made one request run for minutes
                raise bad_request(
                    f"[filters] aggregation [{node.name}] has {len(filters)} filters; the soclab embedded store "
                    f"allows at most {MAX_FILTERS} (Elasticsearch bounds them by [search.max_buckets] and "
                    f"[indices.query.bool.max_clause_count])"
                )
            if isinstance(filters, dict):
                cols[id(node)] = [(k, builder.query(v)) for k, v in filters.items()]
            elif isinstance(filters, list):
                cols[id(node)] = [(str(i), builder.query(v)) for i, v in enumerate(filters)]
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
                col = builder.field(sparams.get("field"), node.name, stype)
                prepared.append((sname, stype, sparams, col))
            cols[id(node)] = prepared
        elif t == "multi_terms":
            terms = p.get("terms")
            if not isinstance(terms, list) or len(terms) < 2:
                raise parsing_exception("[multi_terms] requires at least two [terms]")
            cols[id(node)] = [builder.field(tt.get("field"), node.name, t) for tt in terms]
        elif t == "top_hits":
            builder.need_score = True
            builder.source_cols = []
            for key in parse_sort(p.get("sort")):
                if key.kind == "field":
                    builder.field(key.field, node.name, "top_hits")
        elif "field" in p:
            cols[id(node)] = builder.field(p["field"], node.name, t)
        elif t in METRIC_TYPES or t in ("terms", "date_histogram", "histogram", "range", "date_range",
                                         "ip_range", "missing", "rare_terms"):  # fmt: skip
            if "script" in p:
                raise unsupported(f"[{t}] aggregation with [script]")
            raise bad_request(f"Required one of fields [field, script], but none were specified.")
        prepare(builder, cols, node.children)

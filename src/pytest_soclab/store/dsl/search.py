"""POST /<index>/_search over the embedded store: validate the request, run it, answer like Elasticsearch."""

from __future__ import annotations

import ast
import re
import time
from dataclasses import replace
from typing import Any

import duckdb

from ..catalog import IndexInfo
from ..datefmt import DateFormatError, java_to_strftime, resolve_name
from ..engine import Engine
from ..indexexpr import resolve
from ..layout import DOC_COL, ID_COL
from ..limits import out_of_memory
from ..mappings import TEXT_TYPES
from ..render import build_source, field_values, source_filter
from ..sqlutil import ident, in_values, string
from ..tokens import without_bitmaps
from .aggs import run_aggs
from .build import Ctx
from .errors import EsError, bad_request, parsing_exception, shard_failure, unsupported
from .plan import Plan, SortKey, fetch_docs, fetch_sources, filtered, parse_sort, stored_sources
from .query import compile_query
from .sorting import SENTINELS, after_condition, field_sort_expr, missing_literal, sort_families, sort_value

MAX_RESULT_WINDOW = 10_000

_BODY_KEYS = {
    "query", "size", "from", "sort", "_source", "fields", "docvalue_fields", "stored_fields",
    "track_total_hits", "search_after", "aggs", "aggregations", "post_filter", "timeout", "min_score",
    "version", "seq_no_primary_term", "terminate_after", "track_scores", "profile", "explain",
    "highlight", "collapse", "rescore", "runtime_mappings", "script_fields", "pit", "suggest",
    "indices_boost", "stats", "ext", "knn", "rank", "retriever", "slice", "point_in_time",
}  # fmt: skip
_UNSUPPORTED_KEYS = {
    "highlight", "collapse", "rescore", "runtime_mappings", "script_fields", "pit", "point_in_time",
    "suggest", "knn", "rank", "retriever", "slice", "explain",
}  # fmt: skip


def _token_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "START_OBJECT"
    if isinstance(value, list):
        return "START_ARRAY"
    if isinstance(value, bool):
        return "VALUE_BOOLEAN"
    if isinstance(value, (int, float)):
        return "VALUE_NUMBER"
    if value is None:
        return "VALUE_NULL"
    return "VALUE_STRING"


def _int_param(body: dict[str, Any], key: str, default: int) -> int:
    value = body.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, str, float)):
        raise parsing_exception(f"[{key}] failed to parse field [{key}]")
    try:
        num = int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: Infinity
        raise parsing_exception(f"[{key}] failed to parse field [{key}]") from None
    if isinstance(value, float) and not value.is_integer():
        raise parsing_exception(f"[{key}] failed to parse field [{key}]")
    return num


def search(engine: Engine, index: str, body: dict[str, Any] | None) -> dict[str, Any]:
    started = time.perf_counter()
    body = {} if body is None else body
    if not isinstance(body, dict):
        raise parsing_exception("request body must be a JSON object")
    for key, value in body.items():
        if key not in _BODY_KEYS:
            raise parsing_exception(f"Unknown key for a {_token_kind(value)} in [{key}].")
        if key in _UNSUPPORTED_KEYS and value not in (None, False):
            raise unsupported(f"search option [{key}]")
    size = _int_param(body, "size", 10)
    offset = _int_param(body, "from", 0)
    if size < 0:
        raise bad_request(f"[size] parameter cannot be negative, found [{size}]")
    if offset < 0:
        raise bad_request(f"[from] parameter cannot be negative, found [{offset}]")
    if size + offset > MAX_RESULT_WINDOW:
        raise bad_request(
            f"Result window is too large, from + size must be less than or equal to: [{MAX_RESULT_WINDOW}] but was "
            f"[{size + offset}]. See the scroll api for a more efficient way to request large data sets. This limit can "
            f"be set by changing the [index.max_result_window] index level setting."
        )
    sort = parse_sort(body.get("sort"))
    track_scores = bool(body.get("track_scores"))
    scoring = not sort or any(k.kind == "score" for k in sort) or track_scores or body.get("min_score") is not None
    search_after = body.get("search_after")
    if search_after is not None:
        if not isinstance(search_after, list):
            raise parsing_exception("[search_after] must be an array")
        if not sort:
            raise bad_request("Sort must contain at least one field.")
        if len(search_after) != len(sort):
            raise bad_request(
                f"search_after has {len(search_after)} value(s) but sort has {len(sort)}."
            )
        if offset:
            raise bad_request("[from] parameter must be set to 0 when [search_after] is used.")
    track = body.get("track_total_hits", MAX_RESULT_WINDOW)
    if isinstance(track, bool):
        threshold = None if track else -1
    else:
        threshold = _int_param(body, "track_total_hits", MAX_RESULT_WINDOW)
        if threshold < -1:
            raise bad_request(f"[track_total_hits] parameter must be positive or equals to -1, got {threshold}")
        if threshold == -1:
            threshold = None

    infos = resolve(index, engine.catalog.indices.values())
    now = engine.now()
    plans: list[Plan] = []
    for info in infos:
        ctx = Ctx.of(engine, info, now)
        compiled = compile_query(body.get("query"), ctx, scoring)
        where = compiled.where
        plans.append(Plan(info, engine.relation(info), where, compiled.score, ctx, engine.source_relation(info),
                          compiled.bits))  # fmt: skip
    post = [compile_query(body.get("post_filter"), p.ctx, False).where if body.get("post_filter") else "TRUE" for p in plans]
    min_score = body.get("min_score")
    # a query of indexed text clauses alone on one index: its documents are known, as a bitmap
    bits = plans[0].bits if len(plans) == 1 and post == ["TRUE"] and min_score is None else None

    try:
        # an expensive predicate (LIKE, regexp, lists) is evaluated once: count and top hits together
        # (hits in index order would stop at the tenth match, but a rare pattern, the common case of
        # an investigation, has no tenth match: measured 18 ms shared against 20 in two scans)
        shared = size > 0 and any(_EXPENSIVE.search(without_bitmaps(p.where)) for p in plans)
        counted: list[int] = []
        hit_plans = plans
        if bits is not None and _in_index_order(plans, sort, scoring, search_after):
            # the first hits are the bitmap's first documents: read by number, no scan for them
            first = bits.first(offset + size)
            hit_plans = [replace(plans[0], where=in_values(ident(DOC_COL), [str(d) for d in first]) if first else "FALSE")]
        hits, max_hit = _hits(engine, hit_plans, post, sort, size, offset, search_after, scoring, min_score, body,
                              counted if shared else None)  # fmt: skip
        if bits is not None:
            n = bits.count()
            over = threshold is not None and threshold >= 0 and n > threshold
            total, max_score_all = ((threshold, "gte") if over else (n, "eq")), None
        elif shared and counted:
            n = counted[0]
            over = threshold is not None and threshold >= 0 and n > threshold
            total, max_score_all = ((threshold, "gte") if over else (n, "eq")), None
        else:
            total, max_score_all = _count(engine, plans, post, threshold, scoring, min_score)
        aggs = None
        agg_spec = body.get("aggs", body.get("aggregations"))
        if agg_spec is not None:
            aggs = run_aggs(engine, plans, agg_spec, min_score)
    except duckdb.Error as exc:
        raise _engine_error(exc, plans) from None

    hits_obj: dict[str, Any] = {}
    if threshold != -1:
        value, relation = total
        hits_obj["total"] = {"value": value, "relation": relation}
    if not scoring or (sort and not any(k.kind == "score" for k in sort) and not track_scores):
        hits_obj["max_score"] = None
    else:
        hits_obj["max_score"] = max_score_all if max_score_all is not None else max_hit
    hits_obj["hits"] = hits
    out: dict[str, Any] = {
        "took": max(0, int((time.perf_counter() - started) * 1000)),
        "timed_out": False,
        "_shards": {"total": len(plans), "successful": len(plans), "skipped": 0, "failed": 0},
        "hits": hits_obj,
    }
    if aggs is not None:
        out["aggregations"] = aggs
    return out


def _engine_error(exc: duckdb.Error, plans: list[Plan]) -> EsError:
    if isinstance(exc, duckdb.OutOfMemoryException):
        return out_of_memory(exc)
    name = plans[0].info.concrete if plans else "_all"
    msg = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())[:500]
    if isinstance(exc, duckdb.InvalidInputException) and "regex" in msg.lower():
        return shard_failure(name, "illegal_argument_exception", f"invalid regular expression: {msg}")
    return shard_failure(name, "query_shard_exception", f"failed to run query: {msg}")


def _count(engine: Engine, plans: list[Plan], post: list[str], threshold: int | None, scoring: bool,
           min_score: Any) -> tuple[tuple[int, str], float | None]:  # fmt: skip
    if not plans:
        return (0, "eq"), None
    if min_score is None and all(plan.where == "TRUE" and p == "TRUE" for plan, p in zip(plans, post)):
        n = sum(plan.info.count for plan in plans)  # match_all: the indices' counts, no scan
        return ((threshold, "gte") if threshold is not None and 0 <= threshold < n else (n, "eq")), None
    parts = []
    for plan, p in zip(plans, post):
        cond = filtered(plan, p, min_score)
        if threshold is None or threshold < 0:
            parts.append(f"SELECT count(*) AS n FROM {plan.rel} WHERE {cond}")
        else:
            parts.append(f"SELECT count(*) AS n FROM (SELECT 1 FROM {plan.rel} WHERE {cond} LIMIT {threshold + 1})")
    rows = engine.query("SELECT sum(n)::BIGINT FROM (" + " UNION ALL ".join(parts) + ")")
    n = int(rows[0][0] or 0)
    if threshold is not None and threshold >= 0 and n > threshold:
        return (threshold, "gte"), None
    return (n, "eq"), None


def _hits(engine: Engine, plans: list[Plan], post: list[str], sort: list[SortKey], size: int, offset: int,
          search_after: list[Any] | None, scoring: bool, min_score: Any, body: dict[str, Any],
          counted: list[int] | None = None) -> tuple[list[dict[str, Any]], float | None]:  # fmt: skip
    if not plans or size == 0:
        return [], None
    keys = sort or [SortKey("score", desc=True)]
    families = sort_families(plans, keys)
    _, includes, excludes = source_filter(body.get("_source"))
    want_source = source_filter(body.get("_source"))[0] and body.get("stored_fields") != "_none_"
    field_patterns = _field_patterns(body.get("fields")) + _field_patterns(body.get("docvalue_fields"))
    # One query fetches the documents too when the indices agree on column types and rows come in
    # index order (the scan stops at the LIMIT, having decoded the first rows' columns only).
    stored = want_source and not field_patterns and stored_sources(plans)
    doc_cols = _doc_columns(plans) if (want_source or field_patterns) and counted is None and not stored else []
    order_exprs: list[str] = []
    sortable: list[str] = []
    # every match scoring the same constant: index order alone decides, and the top-N can stop early
    same_score = _constant_score(plans) if scoring else 0.0
    for k, (key, fam) in enumerate(zip(keys, families)):
        direction = "DESC" if key.desc else "ASC"
        if key.kind == "score" and same_score is not None and search_after is None:
            sortable.append("__s")
            continue
        if key.kind == "score":
            expr = "__s"
        elif key.kind == "doc":
            expr = "(__i::DOUBLE * 1e12 + __d)"
        else:
            lo, hi = SENTINELS[fam]
            if key.missing_value is not None:
                fill = missing_literal(key.missing_value, fam)
            else:
                # missing sorts last (or first) whatever the direction
                fill = (hi if not key.desc else lo) if key.missing_last else (lo if not key.desc else hi)
            expr = f"coalesce(__r{k}, {fill})"
        sortable.append(expr)
        if key.kind == "field" and key.missing_value is None:
            # the same order, but on the bare key: DuckDB's top-N then skips row groups (dynamic
            # filter), which it cannot through coalesce (17 ms against 3 on 57k Sysmon events)
            order_exprs.append(f"__r{k} {direction} NULLS {'LAST' if key.missing_last else 'FIRST'}")
            continue
        order_exprs.append(f"{expr} {direction}")
    order_exprs += ["__i ASC", "__d ASC"]
    where_after = ""
    if search_after is not None:
        where_after = "WHERE " + after_condition(keys, families, sortable, search_after)
    order_sql = f"ORDER BY {', '.join(order_exprs)} "
    if _in_index_order(plans, sort, scoring, search_after):
        # rows come in storage order, so LIMIT stops early
        order_sql = ""
    # ...but not under a sort over documents with text: the top-N would carry every match's long
    # values (messages decoded for 318k matches: 149 ms against 20), so the documents are read by
    # number after it. Short documents are carried (a second read costs 2 ms of 12 for 100 hits).
    if stored or (doc_cols and order_sql and any(_has_text(p.info) for p in plans)):
        doc_cols = None
    single_phase = doc_cols is not None
    selects = []
    for pos, (plan, p) in enumerate(zip(plans, post)):
        cols = [f"{pos} AS __i", f"{ident(DOC_COL)} AS __d", f"({plan.score if scoring else '0.0'})::DOUBLE AS __s"]
        for k, (key, fam) in enumerate(zip(keys, families)):
            if key.kind == "field":
                raw, _ = field_sort_expr(plan, key)
                if raw == "NULL":
                    raw = {"num": "NULL::DOUBLE", "str": "NULL::VARCHAR", "ts": "NULL::TIMESTAMP", "ip": "NULL::UHUGEINT"}[fam]
                if fam == "num":
                    raw = f"({raw})::DOUBLE"
                cols.append(f"{raw} AS __r{k}")
            elif key.kind == "index":
                cols.append(f"{string(plan.info.concrete)} AS __r{k}")
        cols.append(f"{ident(ID_COL)} AS __id")
        if single_phase:
            for path, sql_type in doc_cols or []:
                have = plan.info.fields.get(path)
                cols.append(have.sql if have is not None else f"NULL::{sql_type}")  # read by position
        selects.append(f"SELECT {', '.join(cols)} FROM {plan.rel} WHERE {filtered(plan, p, min_score)}")
    union = " UNION ALL ".join(selects)

    # no "OFFSET 0": DuckDB plans any OFFSET as a blocking limit (2 ms more on a 57k-row index)
    top = f"SELECT * FROM {{src}} {where_after} {order_sql}LIMIT {size}{f' OFFSET {offset}' if offset else ''}"
    if counted is None:
        rows = engine.query(top.format(src=f"({union})"))
    else:
        # one scan: the matches (narrow columns) materialised, counted, and their top-N taken
        got = engine.query(
            f"WITH __m AS MATERIALIZED ({union}) SELECT (SELECT count(*) FROM __m) AS __n, __top.* "
            f"FROM (SELECT 1) AS __one LEFT JOIN ({top.format(src='__m')}) AS __top ON TRUE"
        )
        counted.append(int(got[0][0]) if got else 0)
        rows = [tuple(r[1:]) for r in got if r[1] is not None]
    raw_pos: dict[int, int] = {}
    for k, key in enumerate(keys):
        if key.kind in ("field", "index"):
            raw_pos[k] = 3 + len(raw_pos)
    id_col = 3 + len(raw_pos)
    docs: dict[tuple[int, int], dict[str, Any]] = {}
    if stored:
        docs = fetch_sources(engine, plans, rows, includes, excludes)
    elif single_phase and doc_cols:
        names = [path for path, _ in doc_cols]
        for row in rows:
            docs[(row[0], row[1])] = dict(zip(names, row[id_col + 1 :]))
    elif want_source or field_patterns:
        docs = fetch_docs(engine, plans, rows)
    hits = []
    max_hit = None
    show_score = scoring and (not sort or any(k.kind == "score" for k in sort) or body.get("track_scores"))
    for row in rows:
        i, d, s = row[0], row[1], row[2]
        plan = plans[i]
        doc = docs.get((i, d), {})
        score = float(s) if show_score else None
        if score is not None and (max_hit is None or score > max_hit):
            max_hit = score
        hit: dict[str, Any] = {"_index": plan.info.concrete, "_id": row[id_col]}
        if body.get("version"):
            hit["_version"] = 1
        if body.get("seq_no_primary_term"):
            hit["_seq_no"], hit["_primary_term"] = int(d), 1
        hit["_score"] = score
        if stored:
            hit["_source"] = doc
        elif want_source:
            hit["_source"] = build_source(plan.info, doc, includes, excludes)
        if field_patterns:
            fv = field_values(plan.info, doc, field_patterns)
            if fv:
                hit["fields"] = fv
        if sort:
            hit["sort"] = [
                sort_value(key, fam, row[raw_pos[k]] if k in raw_pos else None, plan, row)
                for k, (key, fam) in enumerate(zip(keys, families))
            ]
        hits.append(hit)
    return hits, max_hit


# predicates costly enough per row that scanning twice (count, then hits) shows
_EXPENSIVE = re.compile(r"regexp_|LIKE|contains\(|starts_with|ends_with|list_filter|list_contains|list_has_any|damerau")
_ARITHMETIC = re.compile(r"[\d.\s()+*eE-]+")


def _in_index_order(plans: list[Plan], sort: list[SortKey], scoring: bool, search_after: Any) -> bool:
    """The hits are the first matches in storage order: one index, ranked by a score that is the
    same for every match (or by nothing), no search_after."""
    return (len(plans) == 1 and search_after is None and all(k.kind == "score" for k in sort)
            and (not scoring or _constant_score(plans) is not None))


def _has_text(info: IndexInfo) -> bool:
    return any(c.fdef.type in TEXT_TYPES for c in info.fields.values())


def _constant_score(plans: list[Plan]) -> float | None:
    """The score every match gets, when the query makes it a constant (boosts and sums of
    constants, as compound queries build them: `((1.0) + (1.0)) * 2.0`)."""
    values = set()
    for plan in plans:
        value = _fold(plan.score.replace("::DOUBLE", ""))
        if value is None:
            return None
        values.add(value)
    return values.pop() if len(values) == 1 else None


def _fold(expr: str) -> float | None:
    if not _ARITHMETIC.fullmatch(expr):
        return None
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return None

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            a, b = ev(node.left), ev(node.right)
            return a + b if isinstance(node.op, ast.Add) else a - b if isinstance(node.op, ast.Sub) else a * b
        raise ValueError("not arithmetic")

    try:
        return ev(tree)
    except (ValueError, RecursionError):
        return None


def _doc_columns(plans: list[Plan]) -> list[tuple[str, str]] | None:
    """The union of the indices' columns with their SQL types; None when two indices disagree."""
    types: dict[str, str] = {}
    for plan in plans:
        for path, col in plan.info.fields.items():
            t = col.sql_type
            if types.setdefault(path, t) != t:
                return None
    return sorted(types.items())


def _id_of(engine: Engine, plan: Plan, doc: int) -> str:
    rows = engine.query(f"SELECT {ident(ID_COL)} FROM {plan.rel} WHERE {ident(DOC_COL)} = {int(doc)}")
    return rows[0][0] if rows else ""


def _format_of(fmt: Any) -> str | None:
    """A `fields[].format`, checked before the search runs (a bad one is the request's error)."""
    if fmt is None:
        return None
    if not isinstance(fmt, str):
        raise parsing_exception(f"[fields] [format] must be a string, found [{_token_kind(fmt)}]")
    pattern = resolve_name(fmt) or fmt
    if pattern in ("epoch_millis", "epoch_second"):
        return fmt
    try:
        java_to_strftime(pattern)
    except DateFormatError as exc:
        raise bad_request(f"Invalid format: [{fmt}]: {exc}") from None
    return fmt


def _field_patterns(spec: Any) -> list[tuple[str, str | None]]:
    if not spec:
        return []
    if not isinstance(spec, list):
        raise parsing_exception("[fields] must be an array")
    out = []
    for item in spec:
        if isinstance(item, str):
            out.append((item, None))
        elif isinstance(item, dict) and "field" in item:
            out.append((str(item["field"]), _format_of(item.get("format"))))
        else:
            raise parsing_exception("[fields] entries must be field names or {\"field\": ...} objects")
    return out



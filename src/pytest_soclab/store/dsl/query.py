"""Query DSL -> SQL predicate (and a simple relevance score) over one index table.

Leaves are plain SQL predicates (NULL when the field is missing), so DuckDB can push them
into the scan; negation and clause counting treat NULL as false, so `must_not` keeps
documents that lack the field, as Elasticsearch does. Scores: every matching query-context clause adds its boost
(match queries: per matching term); filter context scores 0. This orders results sensibly
but is not BM25.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..limits import MAX_NESTED_DEPTH
from ..tokens import Bits, any_of, combine
from .build import (
    FALSE, MATCH_ALL, TRUE, Compiled, Ctx, and_, boost_of, check_keys, count_clauses, min_should_match, or_, scored,
    tie_score,
)
from .errors import bad_request, parsing_exception, unsupported
from .fulltext import (
    combined_fields_query, match_bool_prefix_query, match_phrase_query, match_query, multi_match_query,
)  # fmt: skip
from .querystring import compile_query_string
from .termlevel import (
    exists_query, fuzzy_query, ids_query, prefix_query, range_query, regexp_query, term_query, terms_query,
    wildcard_query,
)  # fmt: skip


UNSUPPORTED_QUERIES = frozenset(
    {
        "nested", "has_child", "has_parent", "parent_id", "geo_bounding_box", "geo_distance", "geo_polygon",
        "geo_shape", "shape", "more_like_this", "script", "script_score", "percolate", "knn", "span_term",
        "span_first", "span_near", "span_or", "span_not", "span_containing", "span_within", "span_multi",
        "field_masking_span", "intervals", "distance_feature", "rank_feature", "pinned", "wrapper", "sparse_vector",
        "text_expansion", "weighted_tokens", "semantic", "rule", "terms_set",
    }
)  # fmt: skip


def compile_query(query: Any, ctx: Ctx, scoring: bool = True) -> Compiled:
    if query is None:
        return MATCH_ALL
    count_clauses(ctx, 1)
    if ctx.depth >= MAX_NESTED_DEPTH:
        raise bad_request(
            f"The nested depth of the query exceeds the maximum nested depth for queries set in "
            f"[indices.query.bool.max_nested_depth] ({MAX_NESTED_DEPTH})"
        )
    ctx.depth += 1
    try:
        return _compile(query, ctx, scoring)
    finally:
        ctx.depth -= 1


def _compile(query: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(query, dict):
        raise parsing_exception("[_na] query malformed, must start with start_object")
    if len(query) != 1:
        if not query:
            raise parsing_exception("query malformed, empty clause found")
        keys = list(query)
        raise parsing_exception(f"[{keys[0]}] malformed query, expected [END_OBJECT] but found [FIELD_NAME]")
    kind, body = next(iter(query.items()))
    handler = _HANDLERS.get(kind)
    if handler is None:
        if kind in UNSUPPORTED_QUERIES:
            raise unsupported(f"[{kind}] query")
        raise parsing_exception(f"unknown query [{kind}]")
    result = handler(body, ctx, scoring)
    if not scoring:
        return Compiled(result.where, "0.0", result.bits)
    return result


def _clauses(value: Any, key: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return value
    raise parsing_exception(f"[bool] query malformed, [{key}] must be an object or an array")


def _bool_query(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict):
        raise parsing_exception("[bool] query malformed, no start_object after query name")
    for key in body:
        if key not in ("must", "filter", "should", "must_not", "minimum_should_match", "boost", "_name",
                       "adjust_pure_negative", "disable_coord"):  # fmt: skip
            raise parsing_exception(f"[bool] query does not support [{key}]")
    must = [compile_query(q, ctx, scoring) for q in _clauses(body.get("must"), "must")]
    filt = [compile_query(q, ctx, False) for q in _clauses(body.get("filter"), "filter")]
    should = [compile_query(q, ctx, scoring) for q in _clauses(body.get("should"), "should")]
    must_not = [compile_query(q, ctx, False) for q in _clauses(body.get("must_not"), "must_not")]
    boost = boost_of(body)
    msm_spec = body.get("minimum_should_match")
    if msm_spec is not None:
        need = min_should_match(msm_spec, len(should))
    else:
        need = 1 if should and not must and not filt else 0
    parts = [c.where for c in must] + [c.where for c in filt]
    parts += [f"NOT coalesce({c.where}, FALSE)" for c in must_not if c.where != FALSE]
    if any(c.where == TRUE for c in must_not):
        parts.append(FALSE)
    if should and need > 0:
        if need > len(should):
            parts.append(FALSE)
        elif need == 1:
            parts.append(or_([c.where for c in should]))
        elif need == len(should):
            parts.extend(c.where for c in should)
        else:
            parts.append("(" + " + ".join(f"coalesce({c.where}, FALSE)::INTEGER" for c in should) + f") >= {need}")
    where = and_(parts)
    # should clauses that `where` requires (all of them needed) score without testing them again
    required = need >= len(should) > 0
    scores = [c.score for c in must] + [c.score if required else f"CASE WHEN {c.where} THEN {c.score} ELSE 0 END"
                                        for c in should]  # fmt: skip
    if not must and not should:
        score = "0.0" if (filt or must_not) else "1.0"
    else:
        score = " + ".join(f"({s})" for s in scores)
    if boost != 1.0:
        score = f"({score}) * {boost!r}"
    return Compiled(where, f"({score})::DOUBLE", _bool_bits(must + filt, should, must_not, need))


def _bool_bits(required: list[Compiled], should: list[Compiled], must_not: list[Compiled], need: int) -> Bits | None:
    """The documents a bool of indexed text clauses matches (None when any clause is of another kind)."""
    positive = [c.bits for c in required if c.where != TRUE]
    if should and need == 1:
        positive.append(any_of([c.bits for c in should]))
    elif should and need == len(should):
        positive += [c.bits for c in should]
    elif should and need > 0:
        return None
    return combine(positive, [c.bits for c in must_not])


def _match_all(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    body = body or {}
    if not isinstance(body, dict):
        raise parsing_exception("[match_all] query malformed")
    check_keys("match_all", body, set())
    return scored(TRUE, boost_of(body))


def _match_none(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    return Compiled(FALSE, "0.0")


def _constant_score(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict) or "filter" not in body:
        raise parsing_exception("[constant_score] requires a 'filter' element")
    check_keys("constant_score", body, {"filter"})
    inner = compile_query(body["filter"], ctx, False)
    return scored(inner.where, boost_of(body))


def _dis_max(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict) or not isinstance(body.get("queries"), list):
        raise parsing_exception("[dis_max] requires 'queries' field with at least one clause")
    check_keys("dis_max", body, {"queries", "tie_breaker"})
    parts = [compile_query(q, ctx, scoring) for q in body["queries"]]
    if not parts:
        return Compiled(FALSE, "0.0")
    scores = [f"CASE WHEN {p.where} THEN {p.score} ELSE 0 END" for p in parts]
    tie = float(body.get("tie_breaker", 0.0))
    score = tie_score(scores, tie)
    return Compiled(or_([p.where for p in parts]), f"(({score}) * {boost_of(body)!r})::DOUBLE")


def _boosting(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict) or "positive" not in body or "negative" not in body:
        raise parsing_exception("[boosting] query requires 'positive' and 'negative' queries")
    check_keys("boosting", body, {"positive", "negative", "negative_boost"})
    pos = compile_query(body["positive"], ctx, scoring)
    neg = compile_query(body["negative"], ctx, False)
    nb = float(body.get("negative_boost", 1.0))
    return Compiled(pos.where, f"(({pos.score}) * CASE WHEN coalesce({neg.where}, FALSE) THEN {nb!r} ELSE 1.0 END)::DOUBLE")


def _function_score(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict):
        raise parsing_exception("[function_score] malformed query")
    for key in ("functions", "script_score", "field_value_factor", "random_score", "gauss", "linear", "exp", "weight"):
        if key in body:
            raise unsupported(f"[function_score] with [{key}]")
    return compile_query(body.get("query", {"match_all": {}}), ctx, scoring)


def _query_string(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    return compile_query_string(body, ctx, scoring, simple=False)


def _simple_query_string(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    return compile_query_string(body, ctx, scoring, simple=True)


_HANDLERS: dict[str, Callable[[Any, Ctx, bool], Compiled]] = {
    "match_all": _match_all,
    "match_none": _match_none,
    "term": term_query,
    "terms": terms_query,
    "ids": ids_query,
    "exists": exists_query,
    "range": range_query,
    "prefix": prefix_query,
    "wildcard": wildcard_query,
    "regexp": regexp_query,
    "fuzzy": fuzzy_query,
    "match": match_query,
    "match_phrase": match_phrase_query,
    "match_phrase_prefix": lambda b, c, s: match_phrase_query(b, c, s, prefix=True),
    "match_bool_prefix": match_bool_prefix_query,
    "multi_match": multi_match_query,
    "combined_fields": combined_fields_query,
    "bool": _bool_query,
    "constant_score": _constant_score,
    "dis_max": _dis_max,
    "boosting": _boosting,
    "function_score": _function_score,
    "query_string": _query_string,
    "simple_query_string": _simple_query_string,
}

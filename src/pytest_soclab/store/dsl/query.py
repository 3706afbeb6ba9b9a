"""Query DSL -> SQL predicate (and a simple relevance score) over one index table.

Leaves are plain SQL predicates (NULL when the field is missing), so DuckDB can push them
into the scan; negation and clause counting treat NULL as false, so `must_not` keeps
documents that lack the field, as Elasticsearch does. Scores: every matching query-context clause adds its boost
(match queries: per matching term); filter context scores 0. This orders results sensibly
but is not BM25.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..catalog import FieldRef, IndexInfo
from ..datefmt import DateFormatError, parse_timezone
from ..layout import cidr_range, ip_to_int, ms_to_datetime
from ..mappings import DATE_TYPES, FLOAT_TYPES, INTEGER_TYPES, KEYWORD_TYPES, TEXT_TYPES
from ..sqlutil import glob_sql, ident, literal, string
from . import text
from .datemath import DateMathError, evaluate
from .errors import EsError, parsing_exception, shard_failure, unsupported
from .lucene_regex import parse_flags, to_re2

TRUE = "TRUE"
FALSE = "FALSE"


@dataclass(frozen=True)
class Compiled:
    where: str
    score: str  # a DOUBLE expression, meaningful for matching rows


@dataclass
class Ctx:
    info: IndexInfo
    now: dt.datetime

    def fail(self, type_: str, reason: str) -> EsError:
        return shard_failure(self.info.concrete, type_, reason)


MATCH_ALL = Compiled(TRUE, "1.0")

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
        return Compiled(result.where, "0.0")
    return result


# ---------------------------------------------------------------------------- helpers


def _col(ref: FieldRef) -> str:
    return ref.sql


def _any(ref: FieldRef, pred: Callable[[str], str]) -> str:
    """A per-value predicate over a field, true when any value satisfies it."""
    if not ref.multi:
        return f"({pred(_col(ref))})"
    return f"(len(list_filter({_col(ref)}, lambda __v: {pred('__v')})) > 0)"


def _field_body(kind: str, body: Any, value_key: str = "value") -> tuple[str, dict[str, Any]]:
    """`{field: value}` or `{field: {value_key: ..., options}}` -> (field, options with value_key)."""
    if not isinstance(body, dict) or not body:
        raise parsing_exception(f"[{kind}] query malformed, no start_object after query name")
    fields = [k for k in body if k not in ("boost", "_name")]
    if len(fields) != 1:
        if not fields:
            raise parsing_exception(f"[{kind}] query malformed, no field specified")
        raise parsing_exception(f"[{kind}] query doesn't support multiple fields, found [{fields[0]}] and [{fields[1]}]")
    name = fields[0]
    spec = body[name]
    if isinstance(spec, dict):
        opts = dict(spec)
        if value_key not in opts and kind == "wildcard" and "wildcard" in opts:
            opts[value_key] = opts["wildcard"]
        if value_key not in opts and kind in ("term", "prefix", "regexp", "wildcard", "fuzzy"):
            raise parsing_exception(f"[{kind}] query does not support [{next(iter(opts), '')}]" if opts else f"No value specified for {kind} query")
    else:
        opts = {value_key: spec}
    if "boost" in body:
        opts.setdefault("boost", body["boost"])
    return name, opts


def _boost(opts: dict[str, Any]) -> float:
    b = opts.get("boost", 1.0)
    try:
        return float(b)
    except (TypeError, ValueError):
        raise parsing_exception(f"[boost] must be a number, got [{b}]") from None


def _check_keys(kind: str, opts: dict[str, Any], allowed: set[str]) -> None:
    for key in opts:
        if key not in allowed and key not in ("boost", "_name"):
            raise parsing_exception(f"[{kind}] query does not support [{key}]")


def _scored(where: str, boost: float) -> Compiled:
    return Compiled(where, repr(float(boost)))


# ---------------------------------------------------------------------------- value conversion


def _is_keyword(ref: FieldRef) -> bool:
    return ref.type in KEYWORD_TYPES


def _is_text(ref: FieldRef) -> bool:
    return ref.type in TEXT_TYPES


def _as_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return repr(value)
    if isinstance(value, (dict, list)):
        raise parsing_exception(f"[term] query does not support array or object values: {value!r}")
    return str(value)


def _number(ref: FieldRef, value: Any, ctx: Ctx) -> float | int | None:
    """A query value for a numeric field; None when it can match nothing (decimal for a long)."""
    if isinstance(value, bool):
        raise ctx.fail("query_shard_exception", f"failed to create query: Can't parse boolean value [{value}] as a number")
    try:
        num = float(value) if not isinstance(value, int) else value
    except (TypeError, ValueError):
        raise ctx.fail("query_shard_exception", f'failed to create query: For input string: "{value}"') from None
    if isinstance(num, float) and not math.isfinite(num):
        raise ctx.fail("query_shard_exception", f'failed to create query: For input string: "{value}"')
    if ref.type in INTEGER_TYPES:
        if isinstance(num, float):
            if not num.is_integer():
                return None
            num = int(num)
        return num
    return float(num)


def _date_ms(ref: FieldRef, value: Any, ctx: Ctx, *, round_up: bool = False, fmt: str | None = None,
             tz: dt.tzinfo | None = None) -> int:  # fmt: skip
    if isinstance(value, bool):
        value = str(value).lower()
    if isinstance(value, (int, float)) and not fmt:
        if not isinstance(value, int) and not math.isfinite(value):
            raise ctx.fail("parse_exception", f"failed to parse date field [{value}]")
        return int(value)
    try:
        return evaluate(str(value), ctx.now, round_up=round_up, formats=fmt, tz=tz)
    except (DateMathError, DateFormatError) as exc:
        fmt_name = fmt or "strict_date_optional_time||epoch_millis"
        reason = str(exc) if "operator" in str(exc) else f"failed to parse date field [{value}] with format [{fmt_name}]"
        raise ctx.fail("parse_exception", reason) from None


def _ts(ms: int) -> str:
    try:
        return literal(ms_to_datetime(ms))
    except ValueError as exc:
        raise shard_failure("_all", "parse_exception", f"failed to parse date field: {exc}") from None


def _ip_literal(num: int) -> str:
    return f"'{num}'::UHUGEINT"


def _bool(value: Any, ctx: Ctx) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise ctx.fail("query_shard_exception", f"failed to create query: Can't parse boolean value [{value}], expected [true] or [false]")


def _equals(ref: FieldRef, values: list[Any], ctx: Ctx, *, case_insensitive: bool = False) -> str:
    """term / terms semantics for one field: exact values; CIDRs for ip; tokens for text."""
    if ref.column == "_id":
        return f"{ident('_id')} IN ({', '.join(string(_as_string(v)) for v in values)})" if values else FALSE
    if _is_text(ref):
        preds = []
        for v in values:
            s = _as_string(v)
            s_cmp = s.lower() if case_insensitive else s
            if text.tokenize(s_cmp) != [s_cmp]:
                continue
            # one whole token of the analysed (lowercased) text
            preds.append(text.match_sql("__v", text.token_regex(s_cmp), s_cmp))
        if not preds:
            return FALSE
        return _any(ref, lambda x: " OR ".join(p.replace("__v", x) for p in preds))
    if _is_keyword(ref) or ref.type not in (INTEGER_TYPES | FLOAT_TYPES | DATE_TYPES | {"ip", "boolean"}):
        strs = [_as_string(v) for v in values]
        if case_insensitive:
            lits = ", ".join(string(s.lower()) for s in strs)
            return _any(ref, lambda x: f"lower({x}) IN ({lits})")
        return _in(ref, [string(s) for s in strs])
    if ref.type in INTEGER_TYPES or ref.type in FLOAT_TYPES:
        nums = [n for n in (_number(ref, v, ctx) for v in values) if n is not None]
        return _in(ref, [literal(n) for n in nums])
    if ref.type in DATE_TYPES:
        preds = []
        for v in values:
            lo = _date_ms(ref, v, ctx, round_up=False)
            hi = _date_ms(ref, v, ctx, round_up=True)
            preds.append((lo, hi))
        exact = [lo for lo, hi in preds if lo == hi]
        ranges = [(lo, hi) for lo, hi in preds if lo != hi]
        parts = []
        if exact:
            parts.append(_in(ref, [_ts(ms) for ms in exact]))
        for lo, hi in ranges:
            parts.append(_any(ref, lambda x, lo=lo, hi=hi: f"{x} BETWEEN {_ts(lo)} AND {_ts(hi)}"))
        return _or(parts)
    if ref.type == "ip":
        parts, singles = [], []
        for v in values:
            s = _as_string(v)
            if "/" in s:
                bounds = cidr_range(s)
                if bounds is None:
                    raise ctx.fail("query_shard_exception", f"failed to create query: Expected [ip/prefix] but was [{s}]")
                lo, hi = bounds
                parts.append(_any(ref, lambda x, lo=lo, hi=hi: f"{x} BETWEEN {_ip_literal(lo)} AND {_ip_literal(hi)}"))
            else:
                num = ip_to_int(s)
                if num is None:
                    raise ctx.fail("query_shard_exception", f"failed to create query: '{s}' is not an IP string literal.")
                singles.append(_ip_literal(num))
        if singles:
            parts.append(_in(ref, singles))
        return _or(parts)
    if ref.type == "boolean":
        bools = sorted({_bool(v, ctx) for v in values})
        return _in(ref, [literal(b) for b in bools])
    raise ctx.fail("query_shard_exception", f"field [{ref.name}] of type [{ref.type}] does not support term queries")


def _in(ref: FieldRef, lits: list[str]) -> str:
    if not lits:
        return FALSE
    col = _col(ref)
    if ref.multi:
        if len(lits) == 1:
            return f"list_contains({col}, {lits[0]})"
        return f"list_has_any({col}, [{', '.join(lits)}])"
    if len(lits) == 1:
        return f"({col} = {lits[0]})"
    return f"({col} IN ({', '.join(lits)}))"


def _or(parts: list[str]) -> str:
    return _connect(parts, "OR", FALSE, TRUE)


def _and(parts: list[str]) -> str:
    return _connect(parts, "AND", TRUE, FALSE)


def _connect(parts: list[str], op: str, unit: str, zero: str) -> str:
    """Join predicates with `op`, folding constants: `unit` (its identity) drops out, `zero` wins."""
    parts = [p for p in parts if p != unit]
    if not parts:
        return unit
    if zero in parts:
        return zero
    return parts[0] if len(parts) == 1 else "(" + f" {op} ".join(f"({p})" for p in parts) + ")"


def _resolve(ctx: Ctx, name: str) -> FieldRef | None:
    if name == "_id":
        return FieldRef("_id", "_id", "keyword", False)
    return ctx.info.lookup(name)


def _index_names(ctx: Ctx) -> set[str]:
    return {ctx.info.name, ctx.info.concrete}


# ---------------------------------------------------------------------------- leaf queries


def _term(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    name, opts = _field_body("term", body)
    _check_keys("term", opts, {"value", "case_insensitive"})
    ci = bool(opts.get("case_insensitive", False))
    if name == "_index":
        val = _as_string(opts["value"])
        ok = any((n.lower() == val.lower()) if ci else n == val for n in _index_names(ctx))
        return _scored(TRUE if ok else FALSE, _boost(opts))
    ref = _resolve(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    return _scored(_equals(ref, [opts["value"]], ctx, case_insensitive=ci), _boost(opts))


def _terms(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict):
        raise parsing_exception("[terms] query malformed, no start_object after query name")
    fields = [k for k in body if k not in ("boost", "_name")]
    if len(fields) != 1:
        if not fields:
            raise parsing_exception("[terms] query requires a field")
        raise parsing_exception(f"[terms] query does not support multiple fields, found [{fields[0]}] and [{fields[1]}]")
    name = fields[0]
    values = body[name]
    if isinstance(values, dict):
        raise unsupported("[terms] lookup (terms from another document)")
    if not isinstance(values, list):
        raise parsing_exception(f"[terms] query does not support [{name}]")
    boost = _boost(body)
    if name == "_index":
        ok = any(_as_string(v) in _index_names(ctx) for v in values)
        return _scored(TRUE if ok else FALSE, boost)
    ref = _resolve(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    return _scored(_equals(ref, list(values), ctx), boost)


def _ids(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict) or not isinstance(body.get("values", []), list):
        raise parsing_exception("[ids] query malformed, [values] must be an array")
    _check_keys("ids", body, {"values"})
    vals = [string(_as_string(v)) for v in body.get("values", [])]
    where = f"{ident('_id')} IN ({', '.join(vals)})" if vals else FALSE
    return _scored(where, _boost(body))


def _exists(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict) or "field" not in body:
        raise parsing_exception("[exists] must be provided with a [field]")
    _check_keys("exists", body, {"field"})
    pattern = str(body["field"])
    names = _expand_fields(ctx, pattern) if "*" in pattern else [pattern]
    preds = []
    for name in names:
        if name in ("_id", "_index"):
            preds.append(TRUE)
            continue
        ref = ctx.info.lookup(name)
        if ref is not None:
            preds.append(f"({_col(ref)} IS NOT NULL)")
        else:
            # an object field exists when any of its leaves does
            subs = [c for p, c in ctx.info.fields.items() if p.startswith(name + ".")]
            preds.extend(f"({ident(c.path)} IS NOT NULL)" for c in subs)
    return _scored(_or(preds), _boost(body))


def _expand_fields(ctx: Ctx, pattern: str) -> list[str]:
    rx = re.compile("^" + ".*".join(re.escape(p) for p in pattern.split("*")) + "$")
    return [n for n in ctx.info.field_names() if rx.match(n)]


def _range(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    name, opts = _field_body("range", body, value_key="__none")
    if not isinstance(body.get(name), dict):
        raise parsing_exception(f"[range] query malformed, no start_object after query name")
    _check_keys("range", opts, {"gt", "gte", "lt", "lte", "from", "to", "include_lower", "include_upper",
                                "format", "time_zone", "relation", "__none"})  # fmt: skip
    opts.pop("__none", None)
    if opts.get("relation", "intersects").lower() not in ("intersects", "within", "contains"):
        raise parsing_exception(f"[range] query does not support relation [{opts['relation']}]")
    lower: tuple[Any, bool] | None = None
    upper: tuple[Any, bool] | None = None
    if "from" in opts and opts["from"] is not None:
        lower = (opts["from"], bool(opts.get("include_lower", True)))
    if "to" in opts and opts["to"] is not None:
        upper = (opts["to"], bool(opts.get("include_upper", True)))
    if opts.get("gte") is not None:
        lower = (opts["gte"], True)
    if opts.get("gt") is not None:
        lower = (opts["gt"], False)
    if opts.get("lte") is not None:
        upper = (opts["lte"], True)
    if opts.get("lt") is not None:
        upper = (opts["lt"], False)
    boost = _boost(opts)
    ref = _resolve(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    tz = None
    if opts.get("time_zone"):
        try:
            tz = parse_timezone(str(opts["time_zone"]))
        except DateFormatError as exc:
            raise parsing_exception(str(exc)) from None
    conds: list[Callable[[str], str]] = []
    for bound, is_lower in ((lower, True), (upper, False)):
        if bound is None:
            continue
        value, inclusive = bound
        op = (">=" if inclusive else ">") if is_lower else ("<=" if inclusive else "<")
        lit = _range_literal(ref, value, ctx, is_lower=is_lower, inclusive=inclusive, fmt=opts.get("format"), tz=tz)
        if lit is None:
            continue
        conds.append(lambda x, op=op, lit=lit: f"{x} {op} {lit}")
    if not conds:
        return _scored(f"({_col(ref)} IS NOT NULL)", boost)
    return _scored(_any(ref, lambda x: " AND ".join(c(x) for c in conds)), boost)


def _range_literal(ref: FieldRef, value: Any, ctx: Ctx, *, is_lower: bool, inclusive: bool,
                   fmt: str | None, tz: dt.tzinfo | None) -> str | None:  # fmt: skip
    if ref.type in DATE_TYPES:
        # gt and lte round up, gte and lt round down (Elasticsearch's rounding rules)
        round_up = (is_lower and not inclusive) or (not is_lower and inclusive)
        return _ts(_date_ms(ref, value, ctx, round_up=round_up, fmt=fmt, tz=tz))
    if ref.type in INTEGER_TYPES or ref.type in FLOAT_TYPES:
        try:
            num = float(value)
        except (TypeError, ValueError):
            raise ctx.fail("query_shard_exception", f'failed to create query: For input string: "{value}"') from None
        if ref.type in INTEGER_TYPES:
            num = math.ceil(num) if is_lower else math.floor(num)
            return literal(int(num))
        return literal(num)
    if ref.type == "ip":
        s = _as_string(value)
        num = ip_to_int(s)
        if num is None:
            raise ctx.fail("query_shard_exception", f"failed to create query: '{s}' is not an IP string literal.")
        return _ip_literal(num)
    if ref.type == "boolean":
        return literal(_bool(value, ctx))
    return string(_as_string(value))


def _pattern_query(kind: str, body: Any, ctx: Ctx, keys: set[str], on_index: Callable[[str, set[str]], bool],
                   pred: Callable[[FieldRef, str, bool, Ctx], str]) -> Compiled:  # fmt: skip
    """The frame prefix and wildcard share: options, `_index` matched against the index's own names
    with `on_index(value, names)`, an unmapped field matching nothing, else `pred` on the field."""
    name, opts = _field_body(kind, body)
    _check_keys(kind, opts, {"value", "case_insensitive", "rewrite"} | keys)
    value = _as_string(opts["value"])
    ci = bool(opts.get("case_insensitive", False))
    if name == "_index":
        return _scored(TRUE if on_index(value, _index_names(ctx)) else FALSE, _boost(opts))
    ref = _resolve(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    return _scored(pred(ref, value, ci, ctx), _boost(opts))


def _prefix(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    return _pattern_query("prefix", body, ctx, set(), _index_prefix, _prefix_pred)


def _index_prefix(value: str, names: set[str]) -> bool:
    return any(n.startswith(value) for n in names)


def _is_text_not_keyword(kind: str, ref: FieldRef, ctx: Ctx) -> bool:
    """For the string-pattern queries (prefix, wildcard, regexp): True on a text field, False on a
    keyword field or `_id`; any other field type fails with Elasticsearch's message."""
    if _is_text(ref):
        return True
    if _is_keyword(ref) or ref.column == "_id":
        return False
    raise ctx.fail(
        "query_shard_exception",
        f"Can only use {kind} queries on keyword and text fields - not on [{ref.name}] which is of type [{ref.type}]",
    )


def _prefix_pred(ref: FieldRef, value: str, ci: bool, ctx: Ctx) -> str:
    if _is_text_not_keyword("prefix", ref, ctx):
        v = value.lower() if ci else value
        if v != v.lower():
            return FALSE
        return _any(ref, lambda x: text.match_sql(x, text.prefix_regex(v), v))
    if ci:
        return _any(ref, lambda x: f"starts_with(lower({x}), {string(value.lower())})")
    return _any(ref, lambda x: f"starts_with({x}, {string(value)})")


def _wildcard(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    return _pattern_query("wildcard", body, ctx, {"wildcard"}, _index_glob, _wildcard_pred)


def _index_glob(value: str, names: set[str]) -> bool:
    rx = re.compile("^" + ".*".join(re.escape(p) for p in value.split("*")) + "$")
    return any(rx.match(n) for n in names)


def _wildcard_pred(ref: FieldRef, value: str, ci: bool, ctx: Ctx) -> str:
    if _is_text_not_keyword("wildcard", ref, ctx):
        v = value.lower() if ci else value
        lit = max((p for p in v.replace("?", "*").split("*")), key=len, default="")
        return _any(ref, lambda x: text.match_sql(x, text.wildcard_token_regex(v), lit or None))
    return _any(ref, lambda x: glob_sql(x, value, ci))


def _regexp(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    name, opts = _field_body("regexp", body)
    _check_keys("regexp", opts, {"value", "flags", "flags_value", "case_insensitive", "max_determinized_states", "rewrite"})
    ref = _resolve(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    pattern = to_re2(_as_string(opts["value"]), parse_flags(opts.get("flags")))
    if opts.get("case_insensitive"):
        pattern = "(?i)" + pattern
    if _is_text_not_keyword("regexp", ref, ctx):
        full = text.LEFT + "(?:" + pattern + ")" + text.RIGHT
        return _scored(_any(ref, lambda x: text.match_sql(x, full)), _boost(opts))
    return _scored(_any(ref, lambda x: f"regexp_full_match({x}, {string(pattern)})"), _boost(opts))


def _fuzzy(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    name, opts = _field_body("fuzzy", body)
    _check_keys("fuzzy", opts, {"value", "fuzziness", "prefix_length", "max_expansions", "transpositions", "rewrite"})
    ref = _resolve(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    value = _as_string(opts["value"])
    if not _is_keyword(ref):
        raise unsupported(f"[fuzzy] query on [{ref.name}] of type [{ref.type}] (only keyword fields)")
    dist = _fuzziness(opts.get("fuzziness", "AUTO"), value)
    plen = int(opts.get("prefix_length", 0))
    pre = f" AND starts_with({{x}}, {string(value[:plen])})" if plen else ""
    where = _any(ref, lambda x: f"damerau_levenshtein({x}, {string(value)}) <= {dist}" + pre.format(x=x))
    return _scored(where, _boost(opts))


def _fuzziness(spec: Any, value: str) -> int:
    s = str(spec).upper()
    if s.startswith("AUTO"):
        lo, hi = 3, 6
        if ":" in s:
            parts = s.split(":", 1)[1].split(",")
            lo, hi = int(parts[0]), int(parts[1])
        n = len(value)
        return 0 if n < lo else (1 if n < hi else 2)
    try:
        return min(2, int(float(s)))
    except ValueError:
        raise parsing_exception(f"failed to parse fuzziness [{spec}]") from None


# ---------------------------------------------------------------------------- full text


def _match_one(ref: FieldRef, query: Any, opts: dict[str, Any], ctx: Ctx, boost: float,
               *, lenient: bool = False) -> Compiled:  # fmt: skip
    """`match` on one resolved field."""
    if _is_text(ref):
        tokens = text.tokenize(_as_string(query))
        if not tokens:
            zero = str(opts.get("zero_terms_query", "none")).lower()
            return Compiled(TRUE if zero == "all" else FALSE, "0.0")
        uniq = list(dict.fromkeys(tokens))
        preds = [_any(ref, lambda x, t=t: text.match_sql(x, text.token_regex(t), t)) for t in uniq]
        operator = str(opts.get("operator", "or")).lower()
        if operator not in ("or", "and"):
            raise parsing_exception(f"[match] query does not support operator [{operator}]")
        need = len(uniq) if operator == "and" else 1
        if opts.get("minimum_should_match") is not None and operator == "or":
            need = max(1, _msm(opts["minimum_should_match"], len(uniq)))
        count = " + ".join(f"coalesce({p}, FALSE)::INTEGER" for p in preds)
        where = _and(preds) if need >= len(uniq) else (_or(preds) if need <= 1 else f"({count}) >= {need}")
        return Compiled(where, f"({count})::DOUBLE * {boost!r}")
    try:
        return _scored(_equals(ref, [query], ctx), boost)
    except EsError:
        if lenient:
            return Compiled(FALSE, "0.0")
        raise


def _msm(spec: Any, n: int) -> int:
    """minimum_should_match: 2, -1, "75%", "-25%", "3<90%" combinations."""
    s = str(spec).strip()
    if "<" in s:
        result = n
        for part in s.split():
            cond, _, val = part.partition("<")
            if n > int(cond):
                result = _msm(val, n)
        return result
    try:
        if s.endswith("%"):
            pct = float(s[:-1])
            k = int(n * abs(pct) / 100)
            return n - k if pct < 0 else k
        k = int(s)
    except ValueError:
        raise parsing_exception(f"[minimum_should_match] could not parse [{spec}]") from None
    return n + k if k < 0 else k


def _match(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    name, opts = _field_body("match", body, value_key="query")
    _check_keys("match", opts, {"query", "operator", "minimum_should_match", "zero_terms_query", "lenient",
                                "analyzer", "fuzziness", "prefix_length", "max_expansions", "fuzzy_transpositions",
                                "auto_generate_synonyms_phrase_query", "cutoff_frequency"})  # fmt: skip
    if opts.get("fuzziness") not in (None, 0, "0"):
        raise unsupported("[match] query with [fuzziness]")
    ref = _resolve(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    return _match_one(ref, opts["query"], opts, ctx, _boost(opts), lenient=bool(opts.get("lenient")))


def _phrase_one(ref: FieldRef, query: Any, ctx: Ctx, boost: float, slop: int, prefix: bool,
                *, lenient: bool = False) -> Compiled:  # fmt: skip
    if _is_text(ref):
        tokens = text.tokenize(_as_string(query))
        if not tokens:
            return Compiled(FALSE, "0.0")
        pattern = text.phrase_regex(tokens, slop, prefix_last=prefix)
        longest = max(tokens, key=len)
        return _scored(_any(ref, lambda x: text.match_sql(x, pattern, longest)), boost)
    if prefix and (_is_keyword(ref)):
        return _scored(_prefix_pred(ref, _as_string(query), False, ctx), boost)
    try:
        return _scored(_equals(ref, [query], ctx), boost)
    except EsError:
        if lenient:
            return Compiled(FALSE, "0.0")
        raise


def _match_phrase(body: Any, ctx: Ctx, scoring: bool, prefix: bool = False) -> Compiled:
    kind = "match_phrase_prefix" if prefix else "match_phrase"
    name, opts = _field_body(kind, body, value_key="query")
    _check_keys(kind, opts, {"query", "slop", "analyzer", "zero_terms_query", "max_expansions"})
    ref = _resolve(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    return _phrase_one(ref, opts["query"], ctx, _boost(opts), int(opts.get("slop", 0)), prefix)


def _match_bool_prefix(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    name, opts = _field_body("match_bool_prefix", body, value_key="query")
    _check_keys("match_bool_prefix", opts, {"query", "operator", "minimum_should_match", "analyzer"})
    ref = _resolve(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    if not _is_text(ref):
        return _scored(_prefix_pred(ref, _as_string(opts["query"]), False, ctx), _boost(opts))
    tokens = text.tokenize(_as_string(opts["query"]))
    if not tokens:
        return Compiled(FALSE, "0.0")
    preds = [_any(ref, lambda x, t=t: text.match_sql(x, text.token_regex(t), t)) for t in tokens[:-1]]
    preds.append(_any(ref, lambda x: text.match_sql(x, text.prefix_regex(tokens[-1]), tokens[-1])))
    where = _and(preds) if str(opts.get("operator", "or")).lower() == "and" else _or(preds)
    count = " + ".join(f"coalesce({p}, FALSE)::INTEGER" for p in preds)
    return Compiled(where, f"({count})::DOUBLE * {_boost(opts)!r}")


def _field_patterns(specs: list[Any], ctx: Ctx) -> list[tuple[FieldRef, float]]:
    out: list[tuple[FieldRef, float]] = []
    seen: set[str] = set()
    for spec in specs:
        name, _, boost_s = str(spec).partition("^")
        boost = float(boost_s) if boost_s else 1.0
        names = _expand_fields(ctx, name) if "*" in name else [name]
        for n in names:
            ref = _resolve(ctx, n)
            if ref is not None and n not in seen and ref.type not in ("flattened", "nested", "geo_point", "binary"):
                seen.add(n)
                out.append((ref, boost))
    return out


def _multi_match(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict) or "query" not in body:
        raise parsing_exception("[multi_match] requires query value")
    _check_keys("multi_match", body, {"query", "fields", "type", "operator", "minimum_should_match", "tie_breaker",
                                      "lenient", "analyzer", "slop", "fuzziness", "prefix_length", "max_expansions",
                                      "zero_terms_query", "auto_generate_synonyms_phrase_query", "fuzzy_transpositions"})  # fmt: skip
    if body.get("fuzziness") not in (None, 0, "0"):
        raise unsupported("[multi_match] query with [fuzziness]")
    specs = body.get("fields") or ["*"]
    if isinstance(specs, str):
        specs = [specs]
    lenient = bool(body.get("lenient")) or specs == ["*"]
    mtype = str(body.get("type", "best_fields")).lower()
    fields = _field_patterns(specs, ctx)
    boost = _boost(body)
    if mtype not in ("best_fields", "most_fields", "cross_fields", "phrase", "phrase_prefix", "bool_prefix"):
        raise parsing_exception(f"[multi_match] query does not support type [{mtype}]")
    if mtype == "cross_fields" and str(body.get("operator", "or")).lower() == "and":
        # every term must appear in at least one of the fields
        toks = text.tokenize(_as_string(body["query"]))
        per_tok = []
        for t in toks:
            alts = [_match_one(ref, t, {}, ctx, 1.0, lenient=True).where for ref, _ in fields]
            per_tok.append(_or(alts))
        return Compiled(_and(per_tok) if toks else FALSE, repr(boost))
    parts: list[Compiled] = []
    for ref, fboost in fields:
        if mtype in ("phrase", "phrase_prefix"):
            parts.append(_phrase_one(ref, body["query"], ctx, fboost * boost, int(body.get("slop", 0)),
                                     mtype == "phrase_prefix", lenient=lenient))  # fmt: skip
        else:
            parts.append(_match_one(ref, body["query"], body, ctx, fboost * boost, lenient=lenient))
    parts = [p for p in parts if p.where != FALSE]
    if not parts:
        return Compiled(FALSE, "0.0")
    where = _or([p.where for p in parts])
    scores = [f"CASE WHEN {p.where} THEN {p.score} ELSE 0 END" for p in parts]
    if mtype in ("most_fields", "cross_fields", "bool_prefix") or len(scores) == 1:
        score = " + ".join(scores)
    else:
        tie = float(body.get("tie_breaker", 0.0))
        mx = f"greatest({', '.join(scores)})"
        score = mx if not tie else f"{mx} + {tie!r} * (({' + '.join(scores)}) - {mx})"
    return Compiled(where, f"({score})::DOUBLE")


# ---------------------------------------------------------------------------- compound


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
    boost = _boost(body)
    msm_spec = body.get("minimum_should_match")
    if msm_spec is not None:
        need = _msm(msm_spec, len(should))
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
            parts.append(_or([c.where for c in should]))
        elif need == len(should):
            parts.extend(c.where for c in should)
        else:
            parts.append("(" + " + ".join(f"coalesce({c.where}, FALSE)::INTEGER" for c in should) + f") >= {need}")
    where = _and(parts)
    scores = [c.score for c in must] + [f"CASE WHEN {c.where} THEN {c.score} ELSE 0 END" for c in should]
    if not must and not should:
        score = "0.0" if (filt or must_not) else "1.0"
    else:
        score = " + ".join(f"({s})" for s in scores)
    if boost != 1.0:
        score = f"({score}) * {boost!r}"
    return Compiled(where, f"({score})::DOUBLE")


def _match_all(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    body = body or {}
    if not isinstance(body, dict):
        raise parsing_exception("[match_all] query malformed")
    _check_keys("match_all", body, set())
    return _scored(TRUE, _boost(body))


def _match_none(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    return Compiled(FALSE, "0.0")


def _constant_score(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict) or "filter" not in body:
        raise parsing_exception("[constant_score] requires a 'filter' element")
    _check_keys("constant_score", body, {"filter"})
    inner = compile_query(body["filter"], ctx, False)
    return _scored(inner.where, _boost(body))


def _dis_max(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict) or not isinstance(body.get("queries"), list):
        raise parsing_exception("[dis_max] requires 'queries' field with at least one clause")
    _check_keys("dis_max", body, {"queries", "tie_breaker"})
    parts = [compile_query(q, ctx, scoring) for q in body["queries"]]
    if not parts:
        return Compiled(FALSE, "0.0")
    scores = [f"CASE WHEN {p.where} THEN {p.score} ELSE 0 END" for p in parts]
    tie = float(body.get("tie_breaker", 0.0))
    mx = f"greatest({', '.join(scores)})"
    score = mx if not tie else f"{mx} + {tie!r} * (({' + '.join(scores)}) - {mx})"
    return Compiled(_or([p.where for p in parts]), f"(({score}) * {_boost(body)!r})::DOUBLE")


def _boosting(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict) or "positive" not in body or "negative" not in body:
        raise parsing_exception("[boosting] query requires 'positive' and 'negative' queries")
    _check_keys("boosting", body, {"positive", "negative", "negative_boost"})
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
    from .querystring import compile_query_string

    return compile_query_string(body, ctx, scoring, simple=False)


def _simple_query_string(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    from .querystring import compile_query_string

    return compile_query_string(body, ctx, scoring, simple=True)


def _combined_fields(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict) or "query" not in body:
        raise parsing_exception("[combined_fields] requires query value")
    rewritten = dict(body)
    rewritten["type"] = "cross_fields"
    rewritten.pop("auto_generate_synonyms_phrase_query", None)
    return _multi_match(rewritten, ctx, scoring)


_HANDLERS: dict[str, Callable[[Any, Ctx, bool], Compiled]] = {
    "match_all": _match_all,
    "match_none": _match_none,
    "term": _term,
    "terms": _terms,
    "ids": _ids,
    "exists": _exists,
    "range": _range,
    "prefix": _prefix,
    "wildcard": _wildcard,
    "regexp": _regexp,
    "fuzzy": _fuzzy,
    "match": _match,
    "match_phrase": _match_phrase,
    "match_phrase_prefix": lambda b, c, s: _match_phrase(b, c, s, prefix=True),
    "match_bool_prefix": _match_bool_prefix,
    "multi_match": _multi_match,
    "combined_fields": _combined_fields,
    "bool": _bool_query,
    "constant_score": _constant_score,
    "dis_max": _dis_max,
    "boosting": _boosting,
    "function_score": _function_score,
    "query_string": _query_string,
    "simple_query_string": _simple_query_string,
}


# Exposed for query_string, which builds the same leaves from its own syntax.
equals = _equals
prefix_pred = _prefix_pred
wildcard_pred = _wildcard_pred
match_one = _match_one
phrase_one = _phrase_one
range_literal = _range_literal
any_value = _any
resolve_field = _resolve
expand_fields = _expand_fields
or_ = _or
and_ = _and

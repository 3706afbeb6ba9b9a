"""Term-level queries: exact values (term, terms, ids), exists, range, and the string patterns
(prefix, wildcard, regexp, fuzzy); their leaf predicates serve query_string too."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from typing import Any

from ..catalog import FieldRef
from ..datefmt import DateFormatError, parse_timezone
from ..layout import cidr_range, ip_to_int
from ..mappings import DATE_TYPES, FLOAT_TYPES, INTEGER_TYPES
from .. import terms as terms_mod
from ..sqlutil import glob_sql, ident, in_values, literal, string
from ..tokens import Bits
from . import text
from .build import (
    FALSE, TRUE, Compiled, Ctx, any_value, boost_of, check_keys, col_sql, expand_fields, field_body,
    fuzziness, index_names, or_, resolve_field, scored,
)
from .errors import parsing_exception, unsupported
from .literals import (
    as_string, bool_value, date_ms, ip_literal, is_keyword, is_text, number_value, ts_literal,
)
from .lucene_regex import parse_flags, to_re2


def equals(ref: FieldRef, values: list[Any], ctx: Ctx, *, case_insensitive: bool = False) -> str:
    """term / terms semantics for one field: exact values; CIDRs for ip; tokens for text."""
    if ref.column == "_id":
        return in_values(ident("_id"), [string(as_string(v)) for v in values]) if values else FALSE
    if is_text(ref):
        preds = []
        for v in values:
            s = as_string(v)
            s_cmp = s.lower() if case_insensitive else s
            if text.tokenize(s_cmp) != [s_cmp]:
                continue
            # one whole token of the analysed (lowercased) text
            preds.append(text.match_sql("__v", text.token_regex(s_cmp), s_cmp))
        if not preds:
            return FALSE
        return any_value(ref, lambda x: " OR ".join(p.replace("__v", x) for p in preds))
    if is_keyword(ref) or ref.type not in (INTEGER_TYPES | FLOAT_TYPES | DATE_TYPES | {"ip", "boolean"}):
        strs = [as_string(v) for v in values]
        if case_insensitive:
            lits = ", ".join(string(s.lower()) for s in strs)
            return any_value(ref, lambda x: f"lower({x}) IN ({lits})")
        return _in(ref, [string(s) for s in strs])
    if ref.type in INTEGER_TYPES or ref.type in FLOAT_TYPES:
        nums = [n for n in (number_value(ref, v, ctx) for v in values) if n is not None]
        return _in(ref, [literal(n) for n in nums])
    if ref.type in DATE_TYPES:
        preds = []
        for v in values:
            lo = date_ms(ref, v, ctx, round_up=False)
            hi = date_ms(ref, v, ctx, round_up=True)
            preds.append((lo, hi))
        exact = [lo for lo, hi in preds if lo == hi]
        ranges = [(lo, hi) for lo, hi in preds if lo != hi]
        parts = []
        if exact:
            parts.append(_in(ref, [ts_literal(ms) for ms in exact]))
        for lo, hi in ranges:
            parts.append(any_value(ref, lambda x, lo=lo, hi=hi: f"{x} BETWEEN {ts_literal(lo)} AND {ts_literal(hi)}"))
        return or_(parts)
    if ref.type == "ip":
        parts, singles = [], []
        for v in values:
            s = as_string(v)
            if "/" in s:
                bounds = cidr_range(s)
                if bounds is None:
                    raise ctx.fail("query_shard_exception", f"failed to create query: Expected [ip/prefix] but was [{s}]")
                lo, hi = bounds
                parts.append(any_value(ref, lambda x, lo=lo, hi=hi: f"{x} BETWEEN {ip_literal(lo)} AND {ip_literal(hi)}"))
            else:
                num = ip_to_int(s)
                if num is None:
                    raise ctx.fail("query_shard_exception", f"failed to create query: '{s}' is not an IP string literal.")
                singles.append(ip_literal(num))
        if singles:
            parts.append(_in(ref, singles))
        return or_(parts)
    if ref.type == "boolean":
        bools = sorted({bool_value(v, ctx) for v in values})
        return _in(ref, [literal(b) for b in bools])
    raise ctx.fail("query_shard_exception", f"field [{ref.name}] of type [{ref.type}] does not support term queries")


def _in(ref: FieldRef, lits: list[str]) -> str:
    if not lits:
        return FALSE
    col = col_sql(ref)
    if ref.multi:
        if len(lits) == 1:
            return f"list_contains({col}, {lits[0]})"
        return f"list_has_any({col}, [{', '.join(lits)}])"
    if len(lits) == 1:
        return f"({col} = {lits[0]})"
    return f"({col} IN ({', '.join(lits)}))"


def term_query(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    name, opts = field_body("term", body)
    check_keys("term", opts, {"value", "case_insensitive"})
    ci = bool(opts.get("case_insensitive", False))
    if name == "_index":
        val = as_string(opts["value"])
        ok = any((n.lower() == val.lower()) if ci else n == val for n in index_names(ctx))
        return scored(TRUE if ok else FALSE, boost_of(opts))
    ref = resolve_field(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    return scored(equals(ref, [opts["value"]], ctx, case_insensitive=ci), boost_of(opts))


def terms_query(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
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
    boost = boost_of(body)
    if name == "_index":
        ok = any(as_string(v) in index_names(ctx) for v in values)
        return scored(TRUE if ok else FALSE, boost)
    ref = resolve_field(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    return scored(equals(ref, list(values), ctx), boost)


def ids_query(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict) or not isinstance(body.get("values", []), list):
        raise parsing_exception("[ids] query malformed, [values] must be an array")
    check_keys("ids", body, {"values"})
    vals = [string(as_string(v)) for v in body.get("values", [])]
    where = in_values(ident("_id"), vals) if vals else FALSE
    return scored(where, boost_of(body))


def exists_query(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict) or "field" not in body:
        raise parsing_exception("[exists] must be provided with a [field]")
    check_keys("exists", body, {"field"})
    pattern = str(body["field"])
    names = expand_fields(ctx, pattern) if "*" in pattern else [pattern]
    preds = []
    for name in names:
        if name in ("_id", "_index"):
            preds.append(TRUE)
            continue
        ref = ctx.info.lookup(name)
        if ref is not None:
            preds.append(f"({col_sql(ref)} IS NOT NULL)")
        else:
            # an object field exists when any of its leaves does
            subs = [c for p, c in ctx.info.fields.items() if p.startswith(name + ".")]
            preds.extend(f"({c.sql} IS NOT NULL)" for c in subs)
    return scored(or_(preds), boost_of(body))


def range_query(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    name, opts = field_body("range", body, value_key="__none")
    if not isinstance(body.get(name), dict):
        raise parsing_exception(f"[range] query malformed, no start_object after query name")
    check_keys("range", opts, {"gt", "gte", "lt", "lte", "from", "to", "include_lower", "include_upper",
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
    boost = boost_of(opts)
    ref = resolve_field(ctx, name)
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
        lit = range_literal(ref, value, ctx, is_lower=is_lower, inclusive=inclusive, fmt=opts.get("format"), tz=tz)
        if lit is None:
            continue
        conds.append(lambda x, op=op, lit=lit: f"{x} {op} {lit}")
    if not conds:
        return scored(f"({col_sql(ref)} IS NOT NULL)", boost)
    return scored(any_value(ref, lambda x: " AND ".join(c(x) for c in conds)), boost)


def range_literal(ref: FieldRef, value: Any, ctx: Ctx, *, is_lower: bool, inclusive: bool,
                   fmt: str | None, tz: dt.tzinfo | None) -> str | None:  # fmt: skip
    if ref.type in DATE_TYPES:
        # gt and lte round up, gte and lt round down (Elasticsearch's rounding rules)
        round_up = (is_lower and not inclusive) or (not is_lower and inclusive)
        return ts_literal(date_ms(ref, value, ctx, round_up=round_up, fmt=fmt, tz=tz))
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
        s = as_string(value)
        num = ip_to_int(s)
        if num is None:
            raise ctx.fail("query_shard_exception", f"failed to create query: '{s}' is not an IP string literal.")
        return ip_literal(num)
    if ref.type == "boolean":
        return literal(bool_value(value, ctx))
    return string(as_string(value))


def _pattern_query(kind: str, body: Any, ctx: Ctx, keys: set[str], on_index: Callable[[str, set[str]], bool],
                   pred: Callable[[FieldRef, str, bool, Ctx], tuple[str, Bits | None]]) -> Compiled:  # fmt: skip
    """The frame prefix and wildcard share: options, `_index` matched against the index's own names
    with `on_index(value, names)`, an unmapped field matching nothing, else `pred` on the field."""
    name, opts = field_body(kind, body)
    check_keys(kind, opts, {"value", "case_insensitive", "rewrite"} | keys)
    value = as_string(opts["value"])
    ci = bool(opts.get("case_insensitive", False))
    if name == "_index":
        return scored(TRUE if on_index(value, index_names(ctx)) else FALSE, boost_of(opts))
    ref = resolve_field(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    where, bits = pred(ref, value, ci, ctx)
    return scored(where, boost_of(opts), bits)


def prefix_query(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    return _pattern_query("prefix", body, ctx, set(), _index_prefix, prefix_pred)


def _index_prefix(value: str, names: set[str]) -> bool:
    return any(n.startswith(value) for n in names)


def _is_text_not_keyword(kind: str, ref: FieldRef, ctx: Ctx) -> bool:
    """For the string-pattern queries (prefix, wildcard, regexp): True on a text field, False on a
    keyword field or `_id`; any other field type fails with Elasticsearch's message."""
    if is_text(ref):
        return True
    if is_keyword(ref) or ref.column == "_id":
        return False
    raise ctx.fail(
        "query_shard_exception",
        f"Can only use {kind} queries on keyword and text fields - not on [{ref.name}] which is of type [{ref.type}]",
    )


def keyword_values(ref: FieldRef, ctx: Ctx, per_value: Callable[[str], str]) -> tuple[str, Bits | None]:
    """SQL: some value of the keyword field `ref` satisfies `per_value`; and, on a field with a
    term dictionary (store/terms.py), the documents that have such a value."""
    terms = ctx.terms.get(ref.column) if ref.column and ref.column == ref.name else None
    if terms is None:
        return any_value(ref, per_value), None
    return terms_mod.values_pred(terms, per_value)


def prefix_pred(ref: FieldRef, value: str, ci: bool, ctx: Ctx) -> tuple[str, Bits | None]:
    if _is_text_not_keyword("prefix", ref, ctx):
        v = value.lower() if ci else value
        if v != v.lower():
            return FALSE, None
        return any_value(ref, lambda x: text.match_sql(x, text.prefix_regex(v), v)), None
    if ci:
        return keyword_values(ref, ctx, lambda x: f"starts_with(lower({x}), {string(value.lower())})")
    return keyword_values(ref, ctx, lambda x: f"starts_with({x}, {string(value)})")


def wildcard_query(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    return _pattern_query("wildcard", body, ctx, {"wildcard"}, _index_glob, wildcard_pred)


def _index_glob(value: str, names: set[str]) -> bool:
    rx = re.compile("^" + ".*".join(re.escape(p) for p in value.split("*")) + "$")
    return any(rx.match(n) for n in names)


def wildcard_pred(ref: FieldRef, value: str, ci: bool, ctx: Ctx) -> tuple[str, Bits | None]:
    if _is_text_not_keyword("wildcard", ref, ctx):
        v = value.lower() if ci else value
        lit = max((p for p in v.replace("?", "*").split("*")), key=len, default="")
        return any_value(ref, lambda x: text.match_sql(x, text.wildcard_token_regex(v), lit or None)), None
    return keyword_values(ref, ctx, lambda x: glob_sql(x, value, ci))


def regexp_query(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    name, opts = field_body("regexp", body)
    check_keys("regexp", opts, {"value", "flags", "flags_value", "case_insensitive", "max_determinized_states", "rewrite"})
    ref = resolve_field(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    pattern = to_re2(as_string(opts["value"]), parse_flags(opts.get("flags")))
    if opts.get("case_insensitive"):
        pattern = "(?i)" + pattern
    if _is_text_not_keyword("regexp", ref, ctx):
        full = text.LEFT + "(?:" + pattern + ")" + text.RIGHT
        return scored(any_value(ref, lambda x: text.match_sql(x, full)), boost_of(opts))
    where, bits = keyword_values(ref, ctx, lambda x: f"regexp_full_match({x}, {string(pattern)})")
    return scored(where, boost_of(opts), bits)


def fuzzy_query(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    name, opts = field_body("fuzzy", body)
    check_keys("fuzzy", opts, {"value", "fuzziness", "prefix_length", "max_expansions", "transpositions", "rewrite"})
    ref = resolve_field(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    value = as_string(opts["value"])
    if not is_keyword(ref):
        raise unsupported(f"[fuzzy] query on [{ref.name}] of type [{ref.type}] (only keyword fields)")
    dist = fuzziness(opts.get("fuzziness", "AUTO"), value)
    plen = int(opts.get("prefix_length", 0))
    pre = f" AND starts_with({{x}}, {string(value[:plen])})" if plen else ""
    where, bits = keyword_values(
        ref, ctx, lambda x: f"damerau_levenshtein({x}, {string(value)}) <= {dist}" + pre.format(x=x)
    )
    return scored(where, boost_of(opts), bits)

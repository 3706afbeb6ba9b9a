"""ES|QL scalar and aggregate functions as DuckDB SQL, with Elasticsearch's type checks."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from pytest_soclab.errors import illegal_argument

from ..datefmt import DateFormatError, java_to_strftime
from ..layout import cidr_range
from ..limits import REPEAT_MAX_BYTES
from ..sqlutil import string
from . import ast as A
from .expr import TE, Ctx, as_list, ordinal, sv
from .types import NUMERIC, SQL, span_sql

STR = ("keyword", "text")
NUM = ("integer", "long", "double", "unsigned_long")
DATE = ("date", "date_nanos")
ANY_ORDERED = NUM + STR + DATE + ("ip", "version", "boolean")

Builder = Callable[[Ctx, A.Call, list[TE]], TE]


@dataclass(frozen=True)
class Fn:
    min_args: int
    max_args: int | None
    build: Builder
    mv_aware: bool = False  # takes multi-valued arguments as they are


def expect(ctx: Ctx, call: A.Call, i: int, te: TE, allowed: tuple[str, ...], desc: str) -> bool:
    if te.bad or te.type == "null" or te.type in allowed:
        return True
    ctx.problem(
        call.pos,
        f"{ordinal(i, len(call.args))}argument of [{call.text}] must be [{desc}], "
        f"found value [{call.args[i].text}] type [{te.type}]",
    )
    return False


def _bad(te_list: list[TE]) -> bool:
    return any(t.bad for t in te_list)


def _null_of(type_: str) -> TE:
    return TE("NULL", type_)


def _single(ctx: Ctx, call: A.Call, args: list[TE]) -> list[TE]:
    return [sv(ctx, a, call) for a in args]


def _const_str(ctx: Ctx, call: A.Call, i: int, te: TE, what: str) -> str | None:
    if te.bad:
        return None
    if not te.const or not isinstance(te.value, str):
        ctx.problem(call.pos, f"{ordinal(i, len(call.args))}argument of [{call.text}] must be a constant, received [{call.args[i].text}]")
        return None
    return te.value


# ---------------------------------------------------------------------------- the shared frame

# An argument's allowed types and the name Elasticsearch's type error gives them.
ArgType = tuple[tuple[str, ...], str]
# The part of a builder after the frame: (ctx, call, args, their single values) -> result.
Body = Callable[[Ctx, A.Call, list[TE], list[TE]], TE]

S: ArgType = (STR, "string")
I: ArgType = (("integer", "long"), "integer")
I32: ArgType = (("integer",), "integer")
N: ArgType = (NUM, "numeric")
D: ArgType = (DATE, "datetime")
IP: ArgType = (("ip",), "ip")


def _args_ok(ctx: Ctx, call: A.Call, args: list[TE], arg_types: list[ArgType], *,
             first_only: bool = False) -> bool:  # fmt: skip
    """Whether every argument has an allowed type (the last entry of `arg_types` serves any further
    arguments) and none is already bad. Each mismatch is reported, or with `first_only` just the first:
    the builders written with `all(...)` always stopped there, and their messages stay as they were."""
    ok = True
    for i, te in enumerate(args):
        allowed, desc = arg_types[min(i, len(arg_types) - 1)]
        if not expect(ctx, call, i, te, allowed, desc):
            ok = False
            if first_only:
                break
    return ok and not _bad(args)


def _typed(result: str, arg_types: list[ArgType], *, first_only: bool = False,
           null_type: Callable[[list[TE]], str] | None = None) -> Callable[[Body], Builder]:  # fmt: skip
    """The frame most scalar functions share, as a decorator: type-check the arguments (a mismatch gives
    a bad NULL of `result`), take their single values, and a NULL argument gives a NULL result (of
    `null_type(values)` where that depends on the arguments). Only then does the body build the SQL.
    This runs once per call site at translation time, never per row."""

    def wrap(body: Body) -> Builder:
        def build(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
            if not _args_ok(ctx, call, args, arg_types, first_only=first_only):
                return TE("NULL", result, bad=True)
            vals = _single(ctx, call, args)
            if any(v.type == "null" for v in vals):
                return _null_of(null_type(vals) if null_type else result)
            return body(ctx, call, args, vals)

        return build

    return wrap


# ---------------------------------------------------------------------------- string functions


def _string_fn(sql: Callable[..., str], result: str, arg_types: list[ArgType], *,
               first_only: bool = False) -> Builder:  # fmt: skip
    """A function whose SQL is a template of its single-valued arguments' SQL."""

    def body(ctx: Ctx, call: A.Call, args: list[TE], vals: list[TE]) -> TE:
        return TE(sql(*[v.sql for v in vals]), result)

    return _typed(result, arg_types, first_only=first_only)(body)


_concat = _string_fn(lambda *parts: "(" + " || ".join(parts) + ")", "keyword", [S], first_only=True)


@_typed("integer", [S, S, I32])
def _locate(ctx: Ctx, call: A.Call, args: list[TE], v: list[TE]) -> TE:
    if len(v) == 2:
        return TE(f"strpos({v[0].sql}, {v[1].sql})::INTEGER", "integer")
    s, sub, start = v[0].sql, v[1].sql, f"greatest({v[2].sql}, 1)"
    return TE(f"(CASE WHEN strpos(substring({s}, {start}), {sub}) = 0 THEN 0 ELSE strpos(substring({s}, {start}), {sub}) + {start} - 1 END)::INTEGER", "integer")


@_typed("keyword", [S, I32, I32])
def _substring(ctx: Ctx, call: A.Call, args: list[TE], v: list[TE]) -> TE:
    start = f"(CASE WHEN {v[1].sql} < 0 THEN greatest(length({v[0].sql}) + {v[1].sql} + 1, 1) WHEN {v[1].sql} = 0 THEN 1 ELSE {v[1].sql} END)"
    if len(v) == 2:
        return TE(f"substring({v[0].sql}, {start})", "keyword")
    return TE(f"substring({v[0].sql}, {start}, greatest({v[2].sql}, 0))", "keyword")


@_typed("keyword", [S, I])
def _repeat(ctx: Ctx, call: A.Call, args: list[TE], v: list[TE]) -> TE:
    s, n = v[0].sql, f"greatest({v[1].sql}, 0)"
    msg = f"java.lang.IllegalArgumentException: Creating repeated strings with more than [{REPEAT_MAX_BYTES}] bytes is not supported"
    # the count, not the CASE, carries the check: DuckDB folds a constant repeat() before a CASE could skip it
    too_big = ctx.warn_sql(call, f"octet_length(encode({s}))::HUGEINT * {n} > {REPEAT_MAX_BYTES}", msg)
    return TE(f"repeat({s}, (CASE WHEN {too_big} THEN NULL ELSE {n} END))", "keyword")


@_typed("keyword", [I])
def _space(ctx: Ctx, call: A.Call, args: list[TE], v: list[TE]) -> TE:
    n = f"greatest({v[0].sql}, 0)"
    msg = f"java.lang.IllegalArgumentException: Creating strings longer than [{REPEAT_MAX_BYTES}] bytes is not supported"
    too_big = ctx.warn_sql(call, f"{n} > {REPEAT_MAX_BYTES}", msg)
    return TE(f"repeat(' ', (CASE WHEN {too_big} THEN NULL ELSE {n} END))", "keyword")


def _java_regex(ctx: Ctx, call: A.Call, te: TE, i: int) -> str | None:
    if te.const and isinstance(te.value, str):
        import re as _re

        try:
            _re.compile(te.value)
        except _re.error as exc:
            ctx.problem(call.pos, f"Invalid regex pattern [{te.value}]: {exc}")
            return None
        return string(te.value)
    return te.sql


@_typed("keyword", [S], first_only=True)
def _replace(ctx: Ctx, call: A.Call, args: list[TE], v: list[TE]) -> TE:
    pattern = _java_regex(ctx, call, args[1], 1)
    if pattern is None:
        return TE("NULL", "keyword", bad=True)
    repl = v[2].sql
    if args[2].const and isinstance(args[2].value, str):
        import re as _re

        repl = string(_re.sub(r"\$(\d)", r"\\\1", args[2].value))
    return TE(f"regexp_replace({v[0].sql}, {pattern}, {repl}, 'g')", "keyword")


@_typed("keyword", [S], first_only=True)
def _split(ctx: Ctx, call: A.Call, args: list[TE], v: list[TE]) -> TE:
    return TE(f"string_split({v[0].sql}, {v[1].sql})", "keyword", multi=True)


def _hash(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    if not _args_ok(ctx, call, args, [S], first_only=True):
        return TE("NULL", "keyword", bad=True)
    alg = _const_str(ctx, call, 0, args[0], "algorithm")
    if alg is None:
        return TE("NULL", "keyword", bad=True)
    fn = {"MD5": "md5", "SHA-1": "sha1", "SHA1": "sha1", "SHA-256": "sha256", "SHA256": "sha256"}.get(alg.upper())
    if fn is None:
        return ctx.problem(call.pos, f"invalid algorithm for [{call.text}]: {alg} MessageDigest not available")
    v = sv(ctx, args[1], call)
    return TE(f"{fn}({v.sql})", "keyword")


# ---------------------------------------------------------------------------- math


def _math1(fn: str, result: str | None = "double", guard: str | None = None, err: str = "") -> Builder:
    """One numeric argument; `result` None keeps the argument's type (a NULL argument gives a double NULL)."""

    @_typed(result or "double", [N])
    def build(ctx: Ctx, call: A.Call, args: list[TE], vals: list[TE]) -> TE:
        v = vals[0]
        rtype = result or v.type
        x = f"({v.sql})::DOUBLE" if rtype == "double" else v.sql
        sql = fn.format(x=x)
        if guard:
            cond = guard.format(x=x)
            sql = f"(CASE WHEN {ctx.warn_sql(call, cond, err)} THEN NULL ELSE {sql} END)"
        return TE(sql, rtype)

    return build


@_typed("double", [N, I], null_type=lambda v: v[0].type if v[0].type != "null" else "double")
def _round(ctx: Ctx, call: A.Call, args: list[TE], v: list[TE]) -> TE:
    digits = v[1].sql if len(v) > 1 else "0"
    if v[0].type == "double":
        # Java's Math.round semantics: half up (away from zero for .5)
        return TE(f"round({v[0].sql}, {digits})", "double")
    return TE(f"(round({v[0].sql}, {digits}))::{'INTEGER' if v[0].type == 'integer' else 'BIGINT'}", v[0].type)


@_typed("double", [N, N])
def _pow(ctx: Ctx, call: A.Call, args: list[TE], v: list[TE]) -> TE:
    expr = f"pow(({v[0].sql})::DOUBLE, ({v[1].sql})::DOUBLE)"
    cond = f"isnan({expr}) OR isinf({expr})"
    return TE(f"(CASE WHEN {ctx.warn_sql(call, cond, 'java.lang.ArithmeticException: invalid result: pow')} THEN NULL ELSE {expr} END)", "double")


@_typed("double", [N], first_only=True)
def _log(ctx: Ctx, call: A.Call, args: list[TE], v: list[TE]) -> TE:
    if len(v) == 1:
        x = f"({v[0].sql})::DOUBLE"
        return TE(f"(CASE WHEN {ctx.warn_sql(call, f'{x} <= 0', 'java.lang.ArithmeticException: Log of non-positive number')} THEN NULL ELSE ln({x}) END)", "double")
    b, x = f"({v[0].sql})::DOUBLE", f"({v[1].sql})::DOUBLE"
    cond = f"{x} <= 0 OR {b} <= 0 OR {b} = 1"
    return TE(f"(CASE WHEN {ctx.warn_sql(call, cond, 'java.lang.ArithmeticException: Log of non-positive number')} THEN NULL ELSE ln({x}) / ln({b}) END)", "double")


def _const(sql: str) -> Builder:
    return lambda ctx, call, args: TE(sql, "double")


# ---------------------------------------------------------------------------- conditional


def _common_type(ctx: Ctx, call: A.Call, args: list[TE]) -> str | None:
    """The type COALESCE, GREATEST and LEAST unify their arguments to; None after reporting the mismatch."""
    types = {a.type for a in args if a.type != "null" and not a.bad}
    t = unify(types)
    if t is None:
        ctx.problem(call.pos, f"second argument of [{call.text}] must be [{sorted(types)[0]}], found value [{call.args[1].text}] type [{sorted(types)[-1]}]")
    return t


def _coalesce(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    if _bad(args):
        return TE("NULL", "null", bad=True)
    t = _common_type(ctx, call, args)
    if t is None:
        return TE("NULL", "null", bad=True)
    multi = any(a.multi for a in args)
    parts = [as_list(a) if multi else _cast_to(a, t) for a in args]
    return TE(f"coalesce({', '.join(parts)})", t, multi=multi)


def _greatest_least(fn: str) -> Builder:
    def build(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
        if _bad(args):
            return TE("NULL", "null", bad=True)
        t = _common_type(ctx, call, args)
        if t is None:
            return TE("NULL", "null", bad=True)
        if t in ("text",):
            t = "keyword"
        # multi-valued arguments take their greatest/least value
        parts = []
        for a in args:
            if a.multi:
                parts.append(f"list_{'max' if fn == 'greatest' else 'min'}({a.sql})")
            else:
                parts.append(_cast_to(a, t))
        nulls = " OR ".join(f"({p}) IS NULL" for p in parts)
        return TE(f"(CASE WHEN {nulls} THEN NULL ELSE {fn}({', '.join(parts)}) END)", t)

    return build


def unify(types: set[str]) -> str | None:
    if not types:
        return "null"
    if types <= set(NUMERIC):
        for t in ("double", "unsigned_long", "long", "integer"):
            if t in types:
                return t
    if types <= set(STR):
        return "keyword" if "keyword" in types else "text"
    if len(types) == 1:
        return next(iter(types))
    return None


def _cast_to(te: TE, t: str) -> str:
    if te.type == t or te.type == "null" and t == "null":
        return te.sql
    return f"({te.sql})::{SQL.get(t, 'VARCHAR')}"


# ---------------------------------------------------------------------------- multi-value functions


def _mv(fn: Callable[[str, TE], str], result: Callable[[TE], str] | str, allowed: tuple[str, ...], desc: str,
        multi_result: bool = False) -> Builder:  # fmt: skip
    def build(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
        if not _args_ok(ctx, call, args, [(allowed, desc)]):
            return TE("NULL", "null", bad=True)
        a = args[0]
        rtype = result(a) if callable(result) else result
        if a.type == "null":
            return _null_of(rtype)
        return TE(fn(as_list(a), a), rtype, multi=multi_result)

    return build


def _mv_concat(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    if not _args_ok(ctx, call, args, [S, S]):
        return TE("NULL", "keyword", bad=True)
    if args[0].type == "null":
        return _null_of("keyword")
    d = sv(ctx, args[1], call)
    return TE(f"array_to_string({as_list(args[0])}, {d.sql})", "keyword")


def _mv_slice(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    ok = all(expect(ctx, call, i, a, ("integer",), "integer") for i, a in enumerate(args[1:], 1))
    if not ok or _bad(args):
        return TE("NULL", "null", bad=True)
    a = args[0]
    if a.type == "null":
        return _null_of("null")
    lst = as_list(a)
    start = sv(ctx, args[1], call).sql
    end = sv(ctx, args[2], call).sql if len(args) > 2 else start
    n = f"len({lst})"
    s = f"(CASE WHEN {start} < 0 THEN {n} + {start} ELSE {start} END)"
    e = f"(CASE WHEN {end} < 0 THEN {n} + {end} ELSE {end} END)"
    sql = f"(CASE WHEN {s} > {e} OR {s} >= {n} THEN NULL ELSE list_slice({lst}, {s} + 1, {e} + 1) END)"
    return TE(sql, a.type, multi=True)


def _mv_sort(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    a = args[0]
    if _bad(args):
        return TE("NULL", "null", bad=True)
    order = "ASC"
    if len(args) > 1:
        o = _const_str(ctx, call, 1, args[1], "order")
        if o is None:
            return TE("NULL", a.type, bad=True)
        if o.upper() not in ("ASC", "DESC"):
            return ctx.problem(call.pos, f"Invalid order value in [{call.text}], expected one of [ASC, DESC] but got [{o}]")
        order = o.upper()
    if a.type == "null":
        return _null_of("null")
    return TE(f"list_sort({as_list(a)}, '{order}')", a.type, multi=True)


def _mv_zip(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    if not _args_ok(ctx, call, args, [S], first_only=True):
        return TE("NULL", "keyword", bad=True)
    delim = sv(ctx, args[2], call).sql if len(args) > 2 else "','"
    la, lb = as_list(args[0]), as_list(args[1])
    sql = (
        f"list_transform(list_zip(coalesce({la}, []::VARCHAR[]), coalesce({lb}, []::VARCHAR[])), "
        f"lambda __p: CASE WHEN __p[1] IS NULL THEN __p[2] WHEN __p[2] IS NULL THEN __p[1] ELSE __p[1] || {delim} || __p[2] END)"
    )
    return TE(f"(CASE WHEN {la} IS NULL AND {lb} IS NULL THEN NULL ELSE {sql} END)", "keyword", multi=True)


def _mv_append(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    if _bad(args):
        return TE("NULL", "null", bad=True)
    t = unify({a.type for a in args if a.type != "null"})
    if t is None:
        return ctx.problem(call.pos, f"second argument of [{call.text}] must be [{args[0].type}], found value [{call.args[1].text}] type [{args[1].type}]")
    la, lb = as_list(args[0]), as_list(args[1])
    return TE(f"(CASE WHEN {la} IS NULL THEN {lb} WHEN {lb} IS NULL THEN {la} ELSE list_concat({la}, {lb}) END)", t, multi=True)


def _mv_contains(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    if _bad(args):
        return TE("NULL", "boolean", bad=True)
    la, lb = as_list(args[0]), as_list(args[1])
    return TE(f"(CASE WHEN {lb} IS NULL THEN TRUE WHEN {la} IS NULL THEN FALSE ELSE list_has_all({la}, {lb}) END)", "boolean")


def _mv_percentile(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    if not _args_ok(ctx, call, args, [N, N]):
        return TE("NULL", "double", bad=True)
    p = sv(ctx, args[1], call)
    if not (p.const and isinstance(p.value, (int, float))):
        # DuckDB's quantile takes a constant fraction only
        return ctx.problem(call.pos, f"second argument of [{call.text}] must be a constant, received [{call.args[1].text}]")
    if not 0 <= p.value <= 100:
        msg = f"java.lang.IllegalArgumentException: Percentile parameter must be a number between 0 and 100, found [{float(p.value)}]"
        return TE(f"(CASE WHEN {ctx.warn_sql(call, f'{as_list(args[0])} IS NOT NULL', msg)} THEN NULL::DOUBLE END)", "double")
    return TE(f"list_aggregate({as_list(args[0])}::DOUBLE[], 'quantile_cont', {float(p.value) / 100.0!r})", "double")


# ---------------------------------------------------------------------------- dates


_EXTRACT = {
    "YEAR": "year({d})", "MONTH_OF_YEAR": "month({d})", "DAY_OF_MONTH": "day({d})", "HOUR_OF_DAY": "hour({d})",
    "MINUTE_OF_HOUR": "minute({d})", "SECOND_OF_MINUTE": "second({d})",
    "MILLI_OF_SECOND": "(millisecond({d}) % 1000)", "MICRO_OF_SECOND": "(microsecond({d}) % 1000000)",
    "NANO_OF_SECOND": "((microsecond({d}) % 1000000) * 1000)", "DAY_OF_WEEK": "isodow({d})",
    "DAY_OF_YEAR": "dayofyear({d})", "ALIGNED_WEEK_OF_YEAR": "((dayofyear({d}) - 1) // 7 + 1)",
    "ALIGNED_WEEK_OF_MONTH": "((day({d}) - 1) // 7 + 1)", "EPOCH_DAY": "(epoch({d})::BIGINT // 86400)",
    "MINUTE_OF_DAY": "(hour({d}) * 60 + minute({d}))", "SECOND_OF_DAY": "(hour({d}) * 3600 + minute({d}) * 60 + second({d}))",
    "MILLI_OF_DAY": "((hour({d}) * 3600 + minute({d}) * 60 + second({d})) * 1000 + millisecond({d}) % 1000)",
    "AMPM_OF_DAY": "(CASE WHEN hour({d}) < 12 THEN 0 ELSE 1 END)", "HOUR_OF_AMPM": "(hour({d}) % 12)",
    "CLOCK_HOUR_OF_AMPM": "(CASE WHEN hour({d}) % 12 = 0 THEN 12 ELSE hour({d}) % 12 END)",
    "CLOCK_HOUR_OF_DAY": "(CASE WHEN hour({d}) = 0 THEN 24 ELSE hour({d}) END)",
    "PROLEPTIC_MONTH": "(year({d}) * 12 + month({d}) - 1)", "YEAR_OF_ERA": "year({d})", "ERA": "1",
    "ALIGNED_DAY_OF_WEEK_IN_MONTH": "((day({d}) - 1) % 7 + 1)", "ALIGNED_DAY_OF_WEEK_IN_YEAR": "((dayofyear({d}) - 1) % 7 + 1)",
}  # fmt: skip


def _date_extract(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    if not _args_ok(ctx, call, args, [S, D]):
        return TE("NULL", "long", bad=True)
    part = _const_str(ctx, call, 0, args[0], "part")
    if part is None:
        return TE("NULL", "long", bad=True)
    tmpl = _EXTRACT.get(part.upper())
    if tmpl is None:
        return ctx.problem(call.pos, f"first argument of [{call.text}] must be one of {sorted(_EXTRACT)} or their aliases; received [{part}]")
    d = sv(ctx, args[1], call)
    if d.type == "null":
        return _null_of("long")
    return TE(f"({tmpl.format(d=d.sql)})::BIGINT", "long")


def duckdb_format(pattern: str) -> str:
    """A Java date pattern as a DuckDB strftime pattern (timestamps are UTC, so offsets are fixed)."""
    fmt = java_to_strftime(pattern)
    return fmt.replace("%:z", "Z").replace("%z", "+0000").replace("%Z", "UTC")


DEFAULT_DATE_FORMAT = "%Y-%m-%dT%H:%M:%S.%gZ"


def _date_format(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    if len(args) == 1:
        if not _args_ok(ctx, call, args, [D]):
            return TE("NULL", "keyword", bad=True)
        d = sv(ctx, args[0], call)
        return TE(f"strftime({d.sql}, '{DEFAULT_DATE_FORMAT}')" if d.type != "null" else "NULL", "keyword")
    if not _args_ok(ctx, call, args, [S, D]):
        return TE("NULL", "keyword", bad=True)
    pattern = _const_str(ctx, call, 0, args[0], "format")
    if pattern is None:
        return TE("NULL", "keyword", bad=True)
    try:
        fmt = duckdb_format(pattern)
    except DateFormatError as exc:
        return ctx.problem(call.pos, f"invalid date pattern for [{call.text}]: {exc}")
    d = sv(ctx, args[1], call)
    if d.type == "null":
        return _null_of("keyword")
    return TE(f"strftime({d.sql}, {string(fmt)})", "keyword")


def _date_parse(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    if len(args) == 1:
        if not _args_ok(ctx, call, args, [S]):
            return TE("NULL", "date", bad=True)
        s = sv(ctx, args[0], call)
        return parse_datetime(ctx, call, s)
    if not _args_ok(ctx, call, args, [S, S]):
        return TE("NULL", "date", bad=True)
    pattern = _const_str(ctx, call, 0, args[0], "format")
    if pattern is None:
        return TE("NULL", "date", bad=True)
    try:
        fmt = java_to_strftime(pattern).replace("%-", "%")
    except DateFormatError as exc:
        return ctx.problem(call.pos, f"invalid date pattern for [{call.text}]: {exc}")
    s = sv(ctx, args[1], call)
    if s.type == "null":
        return _null_of("date")
    parsed = f"try_strptime({s.sql}, {string(fmt)})"
    if "%z" in fmt or "%:z" in fmt:
        parsed = f"timezone('UTC', try_strptime({s.sql}, {string(fmt.replace('%:z', '%z'))})::TIMESTAMPTZ)"
    cond = f"({s.sql}) IS NOT NULL AND {parsed} IS NULL"
    msg = f"java.lang.IllegalArgumentException: failed to parse date field [{{}}] with format [{pattern}]"
    return TE(f"(CASE WHEN {ctx.warn_sql(call, cond, msg, value=s.sql)} THEN NULL ELSE {parsed}::TIMESTAMP END)", "date")


def parse_datetime(ctx: Ctx, node: A.Node, s: TE) -> TE:
    if s.type == "null":
        return _null_of("date")
    parsed = f"timezone('UTC', try_cast({s.sql} AS TIMESTAMPTZ))"
    cond = f"({s.sql}) IS NOT NULL AND {parsed} IS NULL"
    msg = "java.lang.IllegalArgumentException: failed to parse date field [{}] with format [strict_date_optional_time]"
    return TE(f"(CASE WHEN {ctx.warn_sql(node, cond, msg, value=s.sql)} THEN NULL ELSE {parsed} END)", "date")


_DIFF_UNITS = {
    "year": "year", "years": "year", "yy": "year", "yyyy": "year", "quarter": "quarter", "quarters": "quarter",
    "qq": "quarter", "q": "quarter", "month": "month", "months": "month", "mm": "month", "m": "month",
    "dayofyear": "day", "dy": "day", "y": "day", "day": "day", "days": "day", "dd": "day", "d": "day",
    "week": "week", "weeks": "week", "wk": "week", "ww": "week", "weekday": "day", "weekdays": "day", "dw": "day",
    "hour": "hour", "hours": "hour", "hh": "hour", "minute": "minute", "minutes": "minute", "mi": "minute",
    "n": "minute", "second": "second", "seconds": "second", "ss": "second", "s": "second",
    "millisecond": "millisecond", "milliseconds": "millisecond", "ms": "millisecond",
    "microsecond": "microsecond", "microseconds": "microsecond", "mcs": "microsecond",
    "nanosecond": "nanosecond", "nanoseconds": "nanosecond", "ns": "nanosecond",
}  # fmt: skip


def _date_diff(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    if not _args_ok(ctx, call, args, [S, D, D]):
        return TE("NULL", "integer", bad=True)
    unit = _const_str(ctx, call, 0, args[0], "unit")
    if unit is None:
        return TE("NULL", "integer", bad=True)
    u = _DIFF_UNITS.get(unit.lower())
    if u is None:
        return ctx.problem(call.pos, f"Received value [{unit}] is not valid date part to add; did you mean {sorted(set(_DIFF_UNITS))[:5]}?")
    a, b = sv(ctx, args[1], call), sv(ctx, args[2], call)
    if a.type == "null" or b.type == "null":
        return _null_of("integer")
    if u == "nanosecond":
        expr = f"date_sub('microsecond', {a.sql}, {b.sql}) * 1000"
    elif u in ("month", "quarter", "year"):
        expr = _calendar_diff(a.sql, b.sql, {"month": 1, "quarter": 3, "year": 12}[u])
    else:
        expr = f"date_sub('{u}', {a.sql}, {b.sql})"
    cond = f"abs({expr}) > 2147483647"
    return TE(f"(CASE WHEN {ctx.warn_sql(call, cond, 'org.elasticsearch.xpack.esql.core.InvalidArgumentException: [' + unit + '] out of [integer] range')} THEN NULL ELSE ({expr})::INTEGER END)", "integer")


def _calendar_diff(a: str, b: str, months: int) -> str:
    """Whole calendar months (quarters, years) from `a` to `b`, as Java's ChronoUnit counts them:
    a month is complete only when `b`'s day and time in its month reach `a`'s."""
    a, b = f"({a})::TIMESTAMP", f"({b})::TIMESTAMP"  # a typed NULL stays bindable
    raw = f"((year({b}) * 12 + month({b})) - (year({a}) * 12 + month({a})))"
    rest_a = f"(epoch_us({a}) - epoch_us(date_trunc('month', {a})))"
    rest_b = f"(epoch_us({b}) - epoch_us(date_trunc('month', {b})))"
    n = (f"(CASE WHEN {raw} > 0 AND {rest_b} < {rest_a} THEN {raw} - 1 "
         f"WHEN {raw} < 0 AND {rest_b} > {rest_a} THEN {raw} + 1 ELSE {raw} END)")  # fmt: skip
    if months == 1:
        return n
    return f"(CASE WHEN {n} < 0 THEN -((-{n}) // {months}) ELSE {n} // {months} END)"


def _date_trunc(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    if not _args_ok(ctx, call, args, [(("date_period", "time_duration"), "dateperiod or timeduration"), D]):
        return TE("NULL", "date", bad=True)
    if not args[0].const:
        return ctx.problem(call.pos, f"first argument of [{call.text}] must be a constant")
    if args[0].value[0] <= 0:
        return ctx.problem(call.pos, "Zero or negative time interval is not supported")
    d = sv(ctx, args[1], call)
    if d.type == "null":
        return _null_of("date")
    return TE(trunc_sql(args[0].value, d.sql), "date")


def trunc_sql(span: tuple[int, str], d: str) -> str:
    n, unit = span
    if n == 1 and unit in ("year", "quarter", "month", "week", "day", "hour", "minute", "second", "millisecond"):
        return f"date_trunc('{unit}', {d})"
    if unit in ("year", "quarter", "month"):
        months = n * {"year": 12, "quarter": 3, "month": 1}[unit]
        return f"time_bucket(INTERVAL {months} MONTH, {d}, TIMESTAMP '1970-01-01')"
    if unit in ("week", "day"):
        days = n * (7 if unit == "week" else 1)
        origin = "TIMESTAMP '1969-12-29'" if unit == "week" else "TIMESTAMP '1970-01-01'"
        return f"time_bucket(INTERVAL {days} DAY, {d}, {origin})"
    return f"time_bucket({span_sql(span)}, {d}, TIMESTAMP '1970-01-01')"


def _now(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    return TE(ctx.now_sql, "date")


# ---------------------------------------------------------------------------- ip


def _cidr_match(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    ok = expect(ctx, call, 0, args[0], ("ip",), "ip")
    ok &= all(expect(ctx, call, i, a, STR, "string") for i, a in enumerate(args[1:], 1))
    if not ok or _bad(args):
        return TE("NULL", "boolean", bad=True)
    ip = sv(ctx, args[0], call)
    if ip.type == "null":
        return _null_of("boolean")
    conds = []
    for i, a in enumerate(args[1:], 1):
        if a.const and isinstance(a.value, str):
            bounds = cidr_range(a.value)
            if bounds is None:
                return ctx.problem(call.pos, f"[{a.value}] is not a valid CIDR in [{call.text}]")
            conds.append(f"({ip.sql} BETWEEN '{bounds[0]}'::UHUGEINT AND '{bounds[1]}'::UHUGEINT)")
        elif a.const and isinstance(a.value, list):
            for v in a.value:
                bounds = cidr_range(str(v))
                if bounds is None:
                    return ctx.problem(call.pos, f"[{v}] is not a valid CIDR in [{call.text}]")
                conds.append(f"({ip.sql} BETWEEN '{bounds[0]}'::UHUGEINT AND '{bounds[1]}'::UHUGEINT)")
        else:
            return ctx.problem(call.pos, f"{ordinal(i, len(args))}argument of [{call.text}] must be a constant CIDR")
    return TE("(" + " OR ".join(conds) + ")", "boolean")


def _ip_prefix(ctx: Ctx, call: A.Call, args: list[TE]) -> TE:
    if not _args_ok(ctx, call, args, [IP, I32, I32]):
        return TE("NULL", "ip", bad=True)
    if not (args[1].const and args[2].const):
        return ctx.problem(call.pos, f"prefix lengths of [{call.text}] must be constants")
    p4, p6 = int(args[1].value), int(args[2].value)
    if not 0 <= p4 <= 32:
        return ctx.problem(call.pos, f"second argument of [{call.text}] must be in the range [0, 32], found [{p4}]")
    if not 0 <= p6 <= 128:
        return ctx.problem(call.pos, f"third argument of [{call.text}] must be in the range [0, 128], found [{p6}]")
    ip = sv(ctx, args[0], call)
    if ip.type == "null":
        return _null_of("ip")
    v4 = 2 ** (32 - p4)
    v6 = 2 ** (128 - p6)
    base = 0xFFFF00000000
    sql = (
        f"(CASE WHEN {ip.sql} BETWEEN '{base}'::UHUGEINT AND '{base + 0xFFFFFFFF}'::UHUGEINT "
        f"THEN '{base}'::UHUGEINT + (({ip.sql} - '{base}'::UHUGEINT) // '{v4}'::UHUGEINT) * '{v4}'::UHUGEINT "
        f"ELSE ({ip.sql} // '{v6}'::UHUGEINT) * '{v6}'::UHUGEINT END)"
    )
    return TE(sql, "ip")


# ---------------------------------------------------------------------------- registry

SCALARS: dict[str, Fn] = {
    "LENGTH": Fn(1, 1, _string_fn(lambda s: f"length({s})::INTEGER", "integer", [S])),
    "BYTE_LENGTH": Fn(1, 1, _string_fn(lambda s: f"octet_length(encode({s}))::INTEGER", "integer", [S])),
    "BIT_LENGTH": Fn(1, 1, _string_fn(lambda s: f"(octet_length(encode({s})) * 8)::INTEGER", "integer", [S])),
    "CONCAT": Fn(2, None, _concat),
    "LEFT": Fn(2, 2, _string_fn(lambda s, n: f"left({s}, greatest({n}, 0))", "keyword", [S, I])),
    "RIGHT": Fn(2, 2, _string_fn(lambda s, n: f"right({s}, greatest({n}, 0))", "keyword", [S, I])),
    "SUBSTRING": Fn(2, 3, _substring),
    "LOCATE": Fn(2, 3, _locate),
    "STARTS_WITH": Fn(2, 2, _string_fn(lambda s, p: f"starts_with({s}, {p})", "boolean", [S, S])),
    "ENDS_WITH": Fn(2, 2, _string_fn(lambda s, p: f"ends_with({s}, {p})", "boolean", [S, S])),
    "TO_LOWER": Fn(1, 1, _string_fn(lambda s: f"lower({s})", "keyword", [S])),
    "TO_UPPER": Fn(1, 1, _string_fn(lambda s: f"upper({s})", "keyword", [S])),
    "TRIM": Fn(1, 1, _string_fn(lambda s: f"trim({s})", "keyword", [S])),
    "LTRIM": Fn(1, 1, _string_fn(lambda s: f"ltrim({s})", "keyword", [S])),
    "RTRIM": Fn(1, 1, _string_fn(lambda s: f"rtrim({s})", "keyword", [S])),
    "REPLACE": Fn(3, 3, _replace),
    "SPLIT": Fn(2, 2, _split),
    "REPEAT": Fn(2, 2, _repeat),
    "REVERSE": Fn(1, 1, _string_fn(lambda s: f"reverse({s})", "keyword", [S])),
    "SPACE": Fn(1, 1, _space),
    "TO_BASE64": Fn(1, 1, _string_fn(lambda s: f"to_base64(encode({s}))", "keyword", [S])),
    "FROM_BASE64": Fn(1, 1, _string_fn(lambda s: f"decode(from_base64({s}))", "keyword", [S])),
    "MD5": Fn(1, 1, _string_fn(lambda s: f"md5({s})", "keyword", [S])),
    "SHA1": Fn(1, 1, _string_fn(lambda s: f"sha1({s})", "keyword", [S])),
    "SHA256": Fn(1, 1, _string_fn(lambda s: f"sha256({s})", "keyword", [S])),
    "HASH": Fn(2, 2, _hash),
    # math
    "ABS": Fn(1, 1, _math1("abs({x})", None)),
    "CEIL": Fn(1, 1, _math1("ceil({x})", None)),
    "FLOOR": Fn(1, 1, _math1("floor({x})", None)),
    "ROUND": Fn(1, 2, _round),
    "SIGNUM": Fn(1, 1, _math1("sign({x})::DOUBLE")),
    "SQRT": Fn(1, 1, _math1("sqrt({x})", guard="{x} < 0", err="java.lang.ArithmeticException: Square root of negative")),
    "CBRT": Fn(1, 1, _math1("cbrt({x})")),
    "EXP": Fn(1, 1, _math1("exp({x})")),
    "LOG10": Fn(1, 1, _math1("log10({x})", guard="{x} <= 0", err="java.lang.ArithmeticException: Log of non-positive number")),
    "LOG": Fn(1, 2, _log),
    "POW": Fn(2, 2, _pow),
    "SIN": Fn(1, 1, _math1("sin({x})")), "COS": Fn(1, 1, _math1("cos({x})")), "TAN": Fn(1, 1, _math1("tan({x})")),
    "ASIN": Fn(1, 1, _math1("asin({x})", guard="abs({x}) > 1", err="java.lang.ArithmeticException: asin out of range")),
    "ACOS": Fn(1, 1, _math1("acos({x})", guard="abs({x}) > 1", err="java.lang.ArithmeticException: acos out of range")),
    "ATAN": Fn(1, 1, _math1("atan({x})")),
    "SINH": Fn(1, 1, _math1("((exp({x}) - exp(-{x})) / 2)")), "COSH": Fn(1, 1, _math1("((exp({x}) + exp(-{x})) / 2)")),
    "TANH": Fn(1, 1, _math1("((exp(2 * {x}) - 1) / (exp(2 * {x}) + 1))")),
    "PI": Fn(0, 0, _const(repr(math.pi))), "E": Fn(0, 0, _const(repr(math.e))), "TAU": Fn(0, 0, _const(repr(math.tau))),
    # conditional
    "COALESCE": Fn(1, None, _coalesce, mv_aware=True),
    "GREATEST": Fn(1, None, _greatest_least("greatest"), mv_aware=True),
    "LEAST": Fn(1, None, _greatest_least("least"), mv_aware=True),
    # multi-value
    "MV_COUNT": Fn(1, 1, _mv(lambda x, a: f"len({x})::INTEGER", "integer", ANY_ORDERED + ("geo_point", "unsupported"), "any"), mv_aware=True),
    "MV_FIRST": Fn(1, 1, _mv(lambda x, a: f"({x})[1]", lambda a: a.type, ANY_ORDERED + ("geo_point",), "any"), mv_aware=True),
    "MV_LAST": Fn(1, 1, _mv(lambda x, a: f"({x})[-1]", lambda a: a.type, ANY_ORDERED + ("geo_point",), "any"), mv_aware=True),
    "MV_MIN": Fn(1, 1, _mv(lambda x, a: f"list_min({x})", lambda a: a.type, ANY_ORDERED, "representable except geo"), mv_aware=True),
    "MV_MAX": Fn(1, 1, _mv(lambda x, a: f"list_max({x})", lambda a: a.type, ANY_ORDERED, "representable except geo"), mv_aware=True),
    "MV_SUM": Fn(1, 1, _mv(lambda x, a: f"list_sum({x})::{'DOUBLE' if a.type == 'double' else 'BIGINT'}",
                        lambda a: a.type if a.type in ("double", "long") else ("integer" if a.type == "integer" else "double"), NUM, "numeric"), mv_aware=True),  # fmt: skip
    "MV_AVG": Fn(1, 1, _mv(lambda x, a: f"list_avg({x})::DOUBLE", "double", NUM, "numeric"), mv_aware=True),
    "MV_MEDIAN": Fn(1, 1, _mv(lambda x, a: f"list_median({x})" + ("::DOUBLE" if a.type == "double" else f"::{'INTEGER' if a.type == 'integer' else 'BIGINT'}"),
                           lambda a: a.type, NUM, "numeric"), mv_aware=True),  # fmt: skip
    "MV_DEDUPE": Fn(1, 1, _mv(lambda x, a: f"list_filter({x}, lambda __d, __i: list_position({x}, __d) = __i)", lambda a: a.type, ANY_ORDERED, "any", True), mv_aware=True),
    "MV_CONCAT": Fn(2, 2, _mv_concat, mv_aware=True),
    "MV_SLICE": Fn(2, 3, _mv_slice, mv_aware=True),
    "MV_SORT": Fn(1, 2, _mv_sort, mv_aware=True),
    "MV_ZIP": Fn(2, 3, _mv_zip, mv_aware=True),
    "MV_APPEND": Fn(2, 2, _mv_append, mv_aware=True),
    "MV_CONTAINS": Fn(2, 2, _mv_contains, mv_aware=True),
    "MV_PERCENTILE": Fn(2, 2, _mv_percentile, mv_aware=True),
    # dates
    "NOW": Fn(0, 0, _now),
    "DATE_TRUNC": Fn(2, 2, _date_trunc),
    "DATE_EXTRACT": Fn(2, 2, _date_extract),
    "DATE_FORMAT": Fn(1, 2, _date_format),
    "DATE_PARSE": Fn(1, 2, _date_parse),
    "DATE_DIFF": Fn(3, 3, _date_diff),
    # ip
    "CIDR_MATCH": Fn(2, None, _cidr_match),
    "IP_PREFIX": Fn(3, 3, _ip_prefix),
}

AGGREGATES = {
    "COUNT", "COUNT_DISTINCT", "MIN", "MAX", "AVG", "SUM", "MEDIAN", "MEDIAN_ABSOLUTE_DEVIATION", "PERCENTILE",
    "STD_DEV", "VALUES", "TOP", "WEIGHTED_AVG",
}  # fmt: skip
CONVERSIONS = {
    "TO_STRING", "TO_KEYWORD", "TO_LONG", "TO_INTEGER", "TO_INT", "TO_DOUBLE", "TO_DBL", "TO_BOOLEAN", "TO_BOOL",
    "TO_DATETIME", "TO_DT", "TO_IP", "TO_VERSION", "TO_VER", "TO_UNSIGNED_LONG", "TO_UL", "TO_ULONG",
    "TO_DEGREES", "TO_RADIANS", "TO_DATE_NANOS", "TO_DATEPERIOD", "TO_TIMEDURATION",
}  # fmt: skip
SPECIAL = {"CASE", "BUCKET", "MATCH", "MATCH_PHRASE", "QSTR", "KQL"}
UNSUPPORTED_FUNCTIONS = {
    "CATEGORIZE", "SAMPLE", "ST_X", "ST_Y", "ST_DISTANCE", "ST_INTERSECTS", "ST_DISJOINT", "ST_CONTAINS",
    "ST_WITHIN", "ST_CENTROID_AGG", "ST_EXTENT_AGG", "ST_ENVELOPE", "ST_XMAX", "ST_XMIN", "ST_YMAX", "ST_YMIN",
    "TO_GEOPOINT", "TO_GEOSHAPE", "TO_CARTESIANPOINT", "TO_CARTESIANSHAPE", "MV_PSERIES_WEIGHTED_SUM", "RATE",
    "TBUCKET", "KNN", "TERM", "SCORE", "DECAY", "CHUNK", "TEXT_EMBEDDING", "TO_AGGREGATE_METRIC_DOUBLE",
    "AVG_OVER_TIME", "MAX_OVER_TIME", "MIN_OVER_TIME", "SUM_OVER_TIME", "COUNT_OVER_TIME", "LAST_OVER_TIME",
    "FIRST_OVER_TIME", "ABSENT", "PRESENT", "FIRST", "LAST", "COPY_SIGN", "HYPOT", "ATAN2", "SCALB",
}  # fmt: skip


def known_function(name: str) -> bool:
    return name in SCALARS or name in AGGREGATES or name in CONVERSIONS or name in SPECIAL

"""ES|QL arithmetic and comparison operators: type checks, Java integer semantics (overflow and
division by zero become null with a warning), and the implicit string conversions of comparisons."""

from __future__ import annotations

from ..layout import ip_to_int, ms_to_datetime, parse_date_ms
from ..sqlutil import literal
from . import ast as A
from .expr import TE, Ctx, sv
from .types import SQL, is_numeric, numeric_common, span_sql


def overflow_guard(ctx: Ctx, node: A.Node, sql: str, t: str) -> TE:
    if t == "integer":
        cond = f"({sql}) NOT BETWEEN -2147483648 AND 2147483647"
        return TE(f"(CASE WHEN {ctx.warn_sql(node, cond, 'java.lang.ArithmeticException: integer overflow')} THEN NULL ELSE ({sql})::INTEGER END)", t)
    if t == "long":
        cond = f"({sql}) NOT BETWEEN -9223372036854775808 AND 9223372036854775807"
        return TE(f"(CASE WHEN {ctx.warn_sql(node, cond, 'java.lang.ArithmeticException: long overflow')} THEN NULL ELSE ({sql})::BIGINT END)", t)
    return TE(sql, t)


_MS = {"millisecond": 1, "second": 1000, "minute": 60_000, "hour": 3_600_000}


def arith(ctx: Ctx, node: A.BinOp, left: TE, right: TE) -> TE:
    op = node.op
    spans = ("date_period", "time_duration")
    # a string literal next to a time span is a datetime ("2024-05-02" - 1 hour), as ES|QL casts it
    if right.type in spans and op in "+-":
        left = implicit_cast(ctx, left, TE("NULL", "date"), node.left)
    if left.type in spans and op == "+":
        right = implicit_cast(ctx, right, TE("NULL", "date"), node.right)
    if left.type in ("date", "date_nanos") and right.type in spans and op in "+-":
        l, r = sv(ctx, left, node), right
        return TE(f"({l.sql} {op} {r.sql})", left.type)
    if left.type in spans and right.type in ("date", "date_nanos") and op == "+":
        r = sv(ctx, right, node)
        return TE(f"({r.sql} + {left.sql})", right.type)
    if left.type in spans and right.type == left.type and op in "+-" and left.const and right.const:
        n1, u1 = left.value
        n2, u2 = right.value
        if u1 != u2 and left.type == "time_duration":
            # durations of different units add up in milliseconds
            n1, n2, u1, u2 = n1 * _MS[u1], n2 * _MS[u2], "millisecond", "millisecond"
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
        return ctx.problem(node.pos, f"{which} argument of [{node.text}] must be [{allowed}], found value [{other.text}] type [{bad.type}]")
    l, r = sv(ctx, left, node), sv(ctx, right, node)
    t = numeric_common(left.type, right.type)
    if t == "double":
        a, b = f"({l.sql})::DOUBLE", f"({r.sql})::DOUBLE"
        if op == "/":
            return TE(f"(CASE WHEN {ctx.warn_sql(node, f'{b} = 0', 'java.lang.ArithmeticException: / by zero')} THEN NULL ELSE {a} / {b} END)", t)
        if op == "%":
            return TE(f"(CASE WHEN {ctx.warn_sql(node, f'{b} = 0', 'java.lang.ArithmeticException: / by zero')} THEN NULL ELSE fmod({a}, {b}) END)", t)
        return TE(f"({a} {op} {b})", t)
    a, b = f"({l.sql})::HUGEINT", f"({r.sql})::HUGEINT"
    if op in ("/", "%"):
        div = f"(CASE WHEN {ctx.warn_sql(node, f'{b} = 0', 'java.lang.ArithmeticException: / by zero')} THEN NULL ELSE "
        if op == "/":
            # Java integer division truncates toward zero
            expr = f"(CASE WHEN ({a} < 0) != ({b} < 0) THEN -(abs({a}) // abs({b})) ELSE abs({a}) // abs({b}) END)"
        else:
            expr = f"({a} - {b} * (CASE WHEN ({a} < 0) != ({b} < 0) THEN -(abs({a}) // abs({b})) ELSE abs({a}) // abs({b}) END))"
        return TE(f"{div}({expr})::{SQL[t]} END)", t)
    return overflow_guard(ctx, node, f"({a} {op} {b})", t)


def compare(ctx: Ctx, node: A.BinOp, left: TE, right: TE) -> TE:
    op = node.op
    left, right = implicit_cast(ctx, left, right, node.left), implicit_cast(ctx, right, left, node.right)
    if op == "=~":
        for side, te in (("first", left), ("second", right)):
            if te.type not in ("keyword", "text", "null"):
                which = node.left if side == "first" else node.right
                return ctx.problem(node.pos, f"{side} argument of [{node.text}] must be [string], found value [{which.text}] type [{te.type}]")
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
            return ctx.problem(node.pos, f"first argument of [{node.text}] is [{fam}] so second argument must also be [{fam}] but was [{rt}]")
        if op in ("<", "<=", ">", ">=") and lt in ("boolean", "geo_point"):
            return ctx.problem(node.pos, f"first argument of [{node.text}] must be [datetime, double, integer, ip, keyword, long, text, unsigned_long or version], found value [{node.left.text}] type [{lt}]")
        if op == "=~" and (lt not in ("keyword", "text") or rt not in ("keyword", "text")):
            return ctx.problem(node.pos, f"first argument of [{node.text}] must be [string], found value [{node.left.text}] type [{lt}]")
    l, r = sv(ctx, left, node), sv(ctx, right, node)
    if op == "=~":
        return TE(f"(lower({l.sql}) = lower({r.sql}))", "boolean")
    sql_op = {"==": "=", "!=": "<>"}.get(op, op)
    return TE(f"({l.sql} {sql_op} {r.sql})", "boolean")


def implicit_cast(ctx: Ctx, te: TE, other: TE, node: A.Node) -> TE:
    """String literals compared with dates, ips and versions are converted (as ES|QL does)."""
    if not (te.const and isinstance(te.value, str)) or other.type not in ("date", "date_nanos", "ip", "version"):
        return te
    if other.type in ("date", "date_nanos"):
        ms = parse_date_ms(te.value)
        if ms is None:
            return ctx.problem(node.pos, f"Cannot convert string [{te.value}] to [DATETIME], error [failed to parse date field [{te.value}] with format [strict_date_optional_time]]")
        return TE(literal(ms_to_datetime(ms)), "date", const=True, value=te.value)
    if other.type == "ip":
        num = ip_to_int(te.value)
        if num is None:
            return ctx.problem(node.pos, f"Cannot convert string [{te.value}] to [IP], error ['{te.value}' is not an IP string literal.]")
        return TE(f"'{num}'::UHUGEINT", "ip", const=True, value=te.value)
    return TE(te.sql, "version", const=True, value=te.value)

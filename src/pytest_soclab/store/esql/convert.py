"""The TO_* conversion functions (and `::` casts). They apply to every value of a multi-valued
input; a value that does not convert becomes null with Elasticsearch's warning."""

from __future__ import annotations

from collections.abc import Callable

from . import ast as A
from .expr import TE, Compile, Ctx
from .functions import parse_datetime
from .types import parse_span, span_sql

_TARGET = {
    "TO_STRING": "keyword", "TO_KEYWORD": "keyword", "TO_LONG": "long", "TO_INTEGER": "integer", "TO_INT": "integer",
    "TO_DOUBLE": "double", "TO_DBL": "double", "TO_BOOLEAN": "boolean", "TO_BOOL": "boolean",
    "TO_DATETIME": "date", "TO_DT": "date", "TO_IP": "ip", "TO_VERSION": "version", "TO_VER": "version",
    "TO_UNSIGNED_LONG": "unsigned_long", "TO_UL": "unsigned_long", "TO_ULONG": "unsigned_long",
    "TO_DEGREES": "double", "TO_RADIANS": "double", "TO_DATE_NANOS": "date_nanos",
    "TO_DATEPERIOD": "date_period", "TO_TIMEDURATION": "time_duration",
}  # fmt: skip

_ACCEPTS = {
    "keyword": None,
    "long": ("boolean", "date", "date_nanos", "keyword", "text", "double", "long", "integer", "unsigned_long"),
    "integer": ("boolean", "date", "date_nanos", "keyword", "text", "double", "long", "integer", "unsigned_long"),
    "double": ("boolean", "date", "date_nanos", "keyword", "text", "double", "long", "integer", "unsigned_long"),
    "unsigned_long": ("boolean", "date", "keyword", "text", "double", "long", "integer", "unsigned_long"),
    "boolean": ("boolean", "keyword", "text", "double", "long", "integer", "unsigned_long"),
    "date": ("date", "date_nanos", "keyword", "text", "double", "long", "integer", "unsigned_long"),
    "date_nanos": ("date", "date_nanos", "keyword", "text", "double", "long", "integer"),
    "ip": ("ip", "keyword", "text"),
    "version": ("version", "keyword", "text"),
}


def _element(target: str, src: str, x: str) -> tuple[str, str | None]:
    """(SQL converting one value `x` of type `src` to `target`, failure message or None)."""
    num_fail = "org.elasticsearch.xpack.esql.core.InvalidArgumentException: Cannot parse number [{}]"
    if target == "keyword":
        if src in ("date", "date_nanos"):
            return f"strftime({x}, '%Y-%m-%dT%H:%M:%S.%gZ')", None
        if src == "ip":
            return f"__ip_str(({x})::VARCHAR)", None
        if src == "boolean":
            return f"(CASE WHEN {x} THEN 'true' ELSE 'false' END)", None
        return f"({x})::VARCHAR", None
    if target in ("long", "integer", "unsigned_long"):
        sql_t = {"long": "BIGINT", "integer": "INTEGER", "unsigned_long": "UBIGINT"}[target]
        if src in ("keyword", "text"):
            return f"TRY_CAST(trunc(TRY_CAST(trim({x}) AS DOUBLE)) AS {sql_t})", num_fail
        if src in ("date", "date_nanos"):
            return f"TRY_CAST(epoch_ms({x}) AS {sql_t})", None
        if src == "boolean":
            return f"(CASE WHEN {x} THEN 1 ELSE 0 END)::{sql_t}", None
        if src == "double":
            return f"TRY_CAST(trunc({x}) AS {sql_t})", f"org.elasticsearch.xpack.esql.core.InvalidArgumentException: [{{}}] out of [{target}] range"
        return f"TRY_CAST({x} AS {sql_t})", f"org.elasticsearch.xpack.esql.core.InvalidArgumentException: [{{}}] out of [{target}] range"
    if target == "double":
        if src in ("keyword", "text"):
            return f"TRY_CAST(trim({x}) AS DOUBLE)", num_fail
        if src in ("date", "date_nanos"):
            return f"epoch_ms({x})::DOUBLE", None
        if src == "boolean":
            return f"(CASE WHEN {x} THEN 1.0 ELSE 0.0 END)", None
        return f"({x})::DOUBLE", None
    if target == "boolean":
        if src in ("keyword", "text"):
            return f"(lower({x}) = 'true')", None
        if src == "boolean":
            return x, None
        return f"(({x}) <> 0)", None
    if target in ("date", "date_nanos"):
        if src in ("date", "date_nanos"):
            return x, None
        if src in ("keyword", "text"):
            return f"timezone('UTC', TRY_CAST({x} AS TIMESTAMPTZ))", "java.lang.IllegalArgumentException: failed to parse date field [{}] with format [strict_date_optional_time]"
        return f"epoch_ms(({x})::BIGINT)", None
    if target == "ip":
        if src == "ip":
            return x, None
        return f"TRY_CAST(__ip_parse_text({x}) AS UHUGEINT)", "java.lang.IllegalArgumentException: '{}' is not an IP string literal."
    if target == "version":
        return f"({x})::VARCHAR", None
    raise ValueError(target)


def convert(ctx: Ctx, node: A.Call, compile_arg: Compile) -> TE:
    target = _TARGET[node.name]
    if len(node.args) != 1:
        if node.name in ("TO_DEGREES", "TO_RADIANS") or len(node.args) != 1:
            return ctx.problem(node.pos, f"error building [{node.name.lower()}]: expects exactly one argument")
    te = compile_arg(node.args[0])
    if te.bad:
        return TE("NULL", target, bad=True)
    if node.name in ("TO_DEGREES", "TO_RADIANS"):
        if te.type not in ("integer", "long", "double", "unsigned_long", "null"):
            return ctx.problem(node.pos, f"argument of [{node.text}] must be [numeric], found value [{node.args[0].text}] type [{te.type}]")
        fn = "degrees" if node.name == "TO_DEGREES" else "radians"
        return _map(ctx, node, te, "double", lambda x: (f"{fn}(({x})::DOUBLE)", None))
    if target in ("date_period", "time_duration"):
        if not (te.const and isinstance(te.value, str)):
            return ctx.problem(node.pos, f"argument of [{node.text}] must be a constant string")
        parts = te.value.strip().split()
        try:
            if len(parts) == 2:
                value, kind = parse_span(int(parts[0]), parts[1], node.pos)
            else:
                raise ValueError
        except Exception:  # noqa: BLE001 - any parse failure is the same user error
            return ctx.problem(node.pos, f"Cannot convert string [{te.value}] to [{target.upper()}]")
        if kind != target:
            return ctx.problem(node.pos, f"Cannot convert string [{te.value}] to [{target.upper()}]")
        return TE(span_sql(value), target, const=True, value=value)
    if te.type == "null":
        return TE("NULL", target)
    accepts = _ACCEPTS.get(target)
    if te.type in ("unsupported", "date_period", "time_duration", "geo_point") or (accepts is not None and te.type not in accepts):
        return ctx.problem(node.pos, f"argument of [{node.text}] must be [{', '.join(accepts or ('any',))}], found value [{node.args[0].text}] type [{te.type}]")
    if te.type == target and target != "keyword":
        return TE(te.sql, target, te.multi, const=te.const, value=te.value)
    if target in ("date", "date_nanos") and te.type in ("keyword", "text") and not te.multi:
        return parse_datetime(ctx, node, te)
    return _map(ctx, node, te, target, lambda x: _element(target, te.type, x))


def _map(ctx: Ctx, node: A.Call, te: TE, target: str, elem: Callable[[str], tuple[str, str | None]]) -> TE:
    if te.multi:
        sql, _ = elem("__e")
        return TE(f"list_filter(list_transform({te.sql}, lambda __e: {sql}), lambda __f: __f IS NOT NULL)", target, multi=True)
    sql, fail = elem(te.sql)
    if fail is None:
        return TE(sql, target, const=False)
    cond = f"({te.sql}) IS NOT NULL AND ({sql}) IS NULL"
    return TE(f"(CASE WHEN {ctx.warn_sql(node, cond, fail, value=te.sql)} THEN NULL ELSE {sql} END)", target)

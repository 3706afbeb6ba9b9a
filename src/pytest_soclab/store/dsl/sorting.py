"""Sort keys over hits: each key's SQL per index, its missing and search_after literals, and the
sort values rendered in a hit."""

from __future__ import annotations

from typing import Any

from ..datefmt import format_ms
from ..layout import datetime_to_ms, int_to_ip, ip_to_int, ms_to_datetime, parse_date_ms
from ..mappings import DATE_TYPES, FLOAT_TYPES, INTEGER_TYPES, TEXT_TYPES
from ..sqlutil import literal, string
from .errors import bad_request, shard_failure
from .plan import Plan, SortKey


def field_sort_expr(plan: Plan, key: SortKey) -> tuple[str, str]:
    """(raw value expression, type) of a field sort key on one index."""
    ref = plan.info.lookup(key.field)
    if ref is None:
        return "NULL", key.unmapped_type or "keyword"
    if ref.type in TEXT_TYPES:
        raise shard_failure(
            plan.info.concrete, "illegal_argument_exception",
            f"Text fields are not optimised for operations that require per-document field data like aggregations "
            f"and sorting, so these operations are disabled by default. Please use a keyword field instead. "
            f"Alternatively, set fielddata=true on [{key.field}] in order to load field data by uninverting the "
            f"inverted index. Note that this can use significant memory.",
        )  # fmt: skip
    if ref.type in ("flattened", "nested", "geo_point", "binary"):
        raise shard_failure(plan.info.concrete, "illegal_argument_exception",
                            f"Field [{key.field}] of type [{ref.type}] does not support sorting")  # fmt: skip
    col = ref.sql
    if ref.multi:
        mode = key.mode or ("max" if key.desc else "min")
        fn = {"min": "list_min", "max": "list_max", "sum": "list_sum", "avg": "list_avg", "median": "list_median"}[mode]
        col = f"{fn}({col})"
    return col, ref.type


SENTINELS = {
    "num": ("'-inf'::DOUBLE", "'inf'::DOUBLE"),
    "str": ("''", "'\U0010ffff'"),
    "ts": ("TIMESTAMP '0001-01-01'", "TIMESTAMP '9999-12-31'"),
    "ip": ("'0'::UHUGEINT", f"'{2**128 - 1}'::UHUGEINT"),
}


def sort_family(es_type: str) -> str:
    if es_type in INTEGER_TYPES or es_type in FLOAT_TYPES or es_type == "boolean":
        return "num"
    if es_type in DATE_TYPES:
        return "ts"
    if es_type == "ip":
        return "ip"
    return "str"


def sort_families(plans: list[Plan], keys: list[SortKey]) -> list[str]:
    """Each key's type family across indices (they must agree)."""
    families: list[str] = []
    for key in keys:
        if key.kind != "field":
            families.append("num" if key.kind in ("score", "doc") else "str")
            continue
        types = set()
        for plan in plans:
            expr, t = field_sort_expr(plan, key)
            if expr != "NULL":
                types.add(sort_family(t))
        if not types:
            if key.unmapped_type is None:
                raise shard_failure(plans[0].info.concrete, "query_shard_exception",
                                    f"No mapping found for [{key.field}] in order to sort on")  # fmt: skip
            types.add(sort_family(key.unmapped_type))
        if len(types) > 1:
            raise bad_request(f"Can't sort on field [{key.field}]; the field has incompatible sort types across indices")
        families.append(types.pop())
    return families


def missing_literal(value: Any, fam: str) -> str:
    if fam == "num":
        try:
            return literal(float(value))
        except (TypeError, ValueError):
            raise bad_request(f"failed to parse missing value [{value}] as a number") from None
    if fam == "ts":
        ms = parse_date_ms(value)
        if ms is None:
            raise bad_request(f"failed to parse date missing value [{value}]")
        return literal(ms_to_datetime(ms))
    if fam == "ip":
        num = ip_to_int(str(value))
        if num is None:
            raise bad_request(f"'{value}' is not an IP string literal.")
        return f"'{num}'::UHUGEINT"
    return string(str(value))


def _after_literal(value: Any, fam: str, kind: str) -> str:
    if value is None:
        return "NULL"
    if kind == "doc":
        return literal(float(value))
    if fam == "num":
        try:
            return literal(float(value))
        except (TypeError, ValueError):
            raise bad_request(f"Failed to parse search_after value [{value}] as a number") from None
    if fam == "ts":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return literal(ms_to_datetime(int(value)))
        return missing_literal(value, fam)
    if fam == "ip":
        return missing_literal(value, fam)
    return string(str(value))


def after_condition(keys: list[SortKey], families: list[str], sortable: list[str], values: list[Any]) -> str:
    ors = []
    for k in range(len(keys)):
        terms = []
        for j in range(k):
            terms.append(f"{sortable[j]} = {_after_value(keys[j], families[j], values[j])}")
        op = "<" if keys[k].desc else ">"
        terms.append(f"{sortable[k]} {op} {_after_value(keys[k], families[k], values[k])}")
        ors.append("(" + " AND ".join(terms) + ")")
    return "(" + " OR ".join(ors) + ")"


def _after_value(key: SortKey, fam: str, value: Any) -> str:
    if key.kind == "doc":
        return literal(float(value))
    if key.kind == "score":
        return literal(float(value))
    lo, hi = SENTINELS[fam]
    sentinel = isinstance(value, int) and not isinstance(value, bool) and value in (2**63 - 1, -(2**63))
    if value is None or (fam in ("num", "ts") and sentinel):
        return (hi if not key.desc else lo) if key.missing_last else (lo if not key.desc else hi)
    return _after_literal(value, fam, key.kind)


def sort_value(key: SortKey, fam: str, value: Any, plan: Plan, row: tuple[Any, ...]) -> Any:
    if key.kind == "score":
        return float(row[2])
    if key.kind == "doc":
        return int(row[1])
    if value is None:
        if key.missing_value is not None:
            return key.missing_value
        if fam in ("num", "ts"):
            return (2**63 - 1) if (key.missing_last != key.desc) else -(2**63)
        return None
    if fam == "ts":
        ms = datetime_to_ms(value)
        if key.fmt:
            return format_ms(ms, key.fmt)
        return ms
    if fam == "ip":
        return int_to_ip(int(value))
    if fam == "num":
        ref = plan.info.lookup(key.field)
        if ref is not None and ref.type == "boolean":
            return int(value)
        if ref is not None and ref.type in INTEGER_TYPES and float(value).is_integer():
            return int(value)
        return float(value)
    return value

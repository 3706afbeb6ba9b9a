"""ES|QL data types: names, SQL storage types, time spans."""

from __future__ import annotations

from pytest_soclab.errors import parsing_exception

from .ast import Pos

NUMERIC = ("integer", "long", "double", "unsigned_long")
STRINGS = ("keyword", "text")
SQL = {
    "keyword": "VARCHAR", "text": "VARCHAR", "version": "VARCHAR", "integer": "INTEGER", "long": "BIGINT",
    "unsigned_long": "UBIGINT", "double": "DOUBLE", "date": "TIMESTAMP", "date_nanos": "TIMESTAMP",
    "boolean": "BOOLEAN", "ip": "UHUGEINT", "null": "INTEGER", "geo_point": "VARCHAR", "unsupported": "VARCHAR",
    "date_period": "INTERVAL", "time_duration": "INTERVAL",
}  # fmt: skip

# type names accepted by `::` and their canonical form
CAST_NAMES = {
    "integer": "integer", "int": "integer", "long": "long", "double": "double", "float": "double",
    "keyword": "keyword", "string": "keyword", "text": "keyword", "boolean": "boolean", "bool": "boolean",
    "datetime": "date", "date": "date", "ip": "ip", "version": "version", "unsigned_long": "unsigned_long",
    "date_nanos": "date_nanos", "date_period": "date_period", "time_duration": "time_duration",
    "geo_point": "geo_point",
}  # fmt: skip

_PERIODS = {
    "day": "day", "days": "day", "d": "day", "week": "week", "weeks": "week", "w": "week",
    "month": "month", "months": "month", "mo": "month", "quarter": "quarter", "quarters": "quarter", "q": "quarter",
    "year": "year", "years": "year", "yr": "year", "y": "year",
}  # fmt: skip
_DURATIONS = {
    "millisecond": "millisecond", "milliseconds": "millisecond", "ms": "millisecond",
    "second": "second", "seconds": "second", "sec": "second", "s": "second",
    "minute": "minute", "minutes": "minute", "min": "minute",
    "hour": "hour", "hours": "hour", "h": "hour",
}  # fmt: skip


def parse_span(n: int, unit: str, pos: Pos) -> tuple[tuple[int, str], str]:
    """`1 day` -> ((1, "day"), "date_period"); `2h` -> ((2, "hour"), "time_duration")."""
    u = unit.lower()
    if u in _PERIODS:
        return (n, _PERIODS[u]), "date_period"
    if u in _DURATIONS:
        return (n, _DURATIONS[u]), "time_duration"
    raise parsing_exception(f"{pos}: Unexpected time interval qualifier: '{unit}'")


def span_sql(value: tuple[int, str]) -> str:
    n, unit = value
    if unit == "quarter":
        n, unit = 3 * n, "month"
    # the quoted form takes a sign (a folded `0 year - 1 year`)
    return f"INTERVAL '{n} {unit.upper()}'"


def span_text(value: tuple[int, str]) -> str:
    n, unit = value
    return f"{n} {unit}{'s' if n != 1 else ''}"


def is_numeric(t: str) -> bool:
    return t in NUMERIC


def is_string(t: str) -> bool:
    return t in STRINGS


def numeric_common(a: str, b: str) -> str:
    order = ["integer", "long", "unsigned_long", "double"]
    return order[max(order.index(a), order.index(b))]

"""Quoting for the SQL the store generates: every identifier and literal goes through here."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any


def ident(name: str) -> str:
    """A DuckDB identifier, always quoted (field names hold dots, @ and spaces)."""
    return '"' + name.replace('"', '""') + '"'


def in_values(expr: str, literals: list[str]) -> str:
    """SQL: `expr` is one of the `literals`, as a semi-join on a VALUES list. DuckDB pushes a
    join's few keys into the scan, which then decodes only the row groups holding them; an IN
    list is a filter after the scan, which decodes every value of every column first (30 ms
    against 3 to fetch ten documents with long messages out of 450k)."""
    rows = ", ".join(f"({v})" for v in literals)
    return f"({expr} IN (SELECT __v FROM (VALUES {rows}) AS __l(__v)))"


def string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def literal(value: Any) -> str:
    """A SQL literal for a Python value (None, bool, int, float, str, datetime, list)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        if -(2**63) <= value < 2**63:
            return str(value)
        return f"{value}::HUGEINT" if value < 0 else f"{value}::UHUGEINT"
    if isinstance(value, float):
        if math.isnan(value):
            return "'nan'::DOUBLE"
        if math.isinf(value):
            return "'inf'::DOUBLE" if value > 0 else "'-inf'::DOUBLE"
        return repr(value) + "::DOUBLE"
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, str):
        return string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    raise TypeError(f"no SQL literal for {type(value).__name__}")


def like_escape(text: str) -> str:
    """Escape SQL LIKE metacharacters (used with ESCAPE '\\')."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def glob_to_like(pattern: str, *, escapes: bool = True) -> str:
    """An Elasticsearch wildcard pattern (`*` any run, `?` one char, `\\` escapes) as a LIKE pattern."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and escapes and i + 1 < len(pattern):
            out.append(like_escape(pattern[i + 1]))
            i += 2
            continue
        if ch == "*":
            out.append("%")
        elif ch == "?":
            out.append("_")
        else:
            out.append(like_escape(ch))
        i += 1
    return "".join(out)


def glob_sql(x: str, pattern: str, case_insensitive: bool = False) -> str:
    """SQL testing that `x` matches a whole-value wildcard pattern, in the cheapest form DuckDB
    has for it (equality, prefix, suffix, substring, then LIKE)."""
    if "\\" not in pattern and "?" not in pattern:
        stars = pattern.count("*")
        core = pattern.strip("*")
        if "*" not in core:
            lead, trail = pattern.startswith("*"), pattern.endswith("*")
            if case_insensitive:
                if stars == 0:
                    return f"(lower({x}) = {string(core.lower())})"
            elif stars == 0:
                return f"({x} = {string(core)})"
            elif lead and trail and core:
                return f"contains({x}, {string(core)})"
            elif trail and not lead:
                return f"starts_with({x}, {string(core)})"
            elif lead and not trail:
                return f"ends_with({x}, {string(core)})"
            elif not core:
                return f"({x} IS NOT NULL)"
    like = glob_to_like(pattern)
    op = "ILIKE" if case_insensitive else "LIKE"
    if like == glob_to_like(pattern, escapes=False) and "\\" not in like:
        return f"({x} {op} {string(like)})"
    return f"({x} {op} {string(like)} ESCAPE '\\')"

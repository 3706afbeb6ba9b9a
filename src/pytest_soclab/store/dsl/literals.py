"""Query values as SQL literals for a field's type (numbers, dates with date math, ips, booleans)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from ..catalog import FieldRef
from ..datefmt import DateFormatError
from ..layout import ms_to_datetime
from ..mappings import INTEGER_TYPES, KEYWORD_TYPES, TEXT_TYPES
from ..sqlutil import literal
from .build import Ctx
from .datemath import DateMathError, evaluate
from .errors import parsing_exception, shard_failure


def is_keyword(ref: FieldRef) -> bool:
    return ref.type in KEYWORD_TYPES


def is_text(ref: FieldRef) -> bool:
    return ref.type in TEXT_TYPES


def as_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return repr(value)
    if isinstance(value, (dict, list)):
        raise parsing_exception(f"[term] query does not support array or object values: {value!r}")
    return str(value)


def number_value(ref: FieldRef, value: Any, ctx: Ctx) -> float | int | None:
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


def date_ms(ref: FieldRef, value: Any, ctx: Ctx, *, round_up: bool = False, fmt: str | None = None,
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


def ts_literal(ms: int) -> str:
    try:
        return literal(ms_to_datetime(ms))
    except ValueError as exc:
        raise shard_failure("_all", "parse_exception", f"failed to parse date field: {exc}") from None


def ip_literal(num: int) -> str:
    return f"'{num}'::UHUGEINT"


def bool_value(value: Any, ctx: Ctx) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise ctx.fail("query_shard_exception", f"failed to create query: Can't parse boolean value [{value}], expected [true] or [false]")

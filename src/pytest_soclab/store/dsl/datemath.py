"""Elasticsearch date math: `now-1d/d`, `2024-05-01||+1M/M`, with rounding as range queries apply it."""

from __future__ import annotations

import calendar
import datetime as dt
import re

from ..datefmt import parse_with
from ..layout import datetime_to_ms

_OP = re.compile(r"([+-])(\d+)([yMwdhHms])|/([yMwdhHms])")
UNITS = "yMwdhHms"


class DateMathError(ValueError):
    pass


def evaluate(
    expr: str,
    now: dt.datetime,
    *,
    round_up: bool = False,
    formats: str | None = None,
    tz: dt.tzinfo | None = None,
) -> int:
    """Epoch millis of a date-math expression. `round_up` makes `/d` go to the last millisecond
    of the unit (how `gt` and `lte` bounds are rounded)."""
    text = expr.strip()
    if text.startswith("now"):
        anchor = now.replace(tzinfo=dt.timezone.utc) if now.tzinfo is None else now
        math = text[3:]
    else:
        base, sep, math = text.partition("||")
        if not sep:
            math = ""
        ms = parse_with(base, formats, tz)
        if ms is None:
            raise DateMathError(
                f"failed to parse date field [{base}] with format [{formats or 'strict_date_optional_time||epoch_millis'}]"
            )
        if not math:
            unit = _precision(base) if round_up and not formats else None
            if unit is None:
                return ms
            # missing date components round up to the end of the given precision, as ES parses upper bounds
            when = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=ms)
            if tz is not None:
                when = when.astimezone(tz)
            return datetime_to_ms(_round(when, unit, True))
        anchor = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=ms)
    if tz is not None:
        anchor = anchor.astimezone(tz)
    pos = 0
    while pos < len(math):
        m = _OP.match(math, pos)
        if not m:
            raise DateMathError(f"operator not supported for date math [{math}]")
        pos = m.end()
        try:
            if m.group(4):
                anchor = _round(anchor, m.group(4), round_up)
            else:
                n = int(m.group(2)) * (1 if m.group(1) == "+" else -1)
                anchor = _add(anchor, n, m.group(3))
        except (ValueError, OverflowError):
            # Elasticsearch's dates end at year +-999999999; Python's at 1..9999
            raise DateMathError(f"failed to parse date field [{expr}]: date math result is out of range") from None
    return datetime_to_ms(anchor)


_PRECISION = [
    (re.compile(r"^\d{4}$"), "y"),
    (re.compile(r"^\d{4}-\d{2}$"), "M"),
    (re.compile(r"^\d{4}-\d{2}-\d{2}$"), "d"),
    (re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}$"), "h"),
    (re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(Z|[+-]\d{2}:?\d{2})?$"), "m"),
    (re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:?\d{2})?$"), "s"),
]


def _precision(text: str) -> str | None:
    for rx, unit in _PRECISION:
        if rx.match(text.strip()):
            return unit
    return None


def _add(when: dt.datetime, n: int, unit: str) -> dt.datetime:
    if unit == "y":
        return _add_months(when, 12 * n)
    if unit == "M":
        return _add_months(when, n)
    seconds = {"w": 604800, "d": 86400, "h": 3600, "H": 3600, "m": 60, "s": 1}[unit]
    return when + dt.timedelta(seconds=seconds * n)


def _add_months(when: dt.datetime, months: int) -> dt.datetime:
    total = when.year * 12 + (when.month - 1) + months
    year, month = divmod(total, 12)
    day = min(when.day, calendar.monthrange(year, month + 1)[1])
    return when.replace(year=year, month=month + 1, day=day)


def _round(when: dt.datetime, unit: str, up: bool) -> dt.datetime:
    if unit == "y":
        start = when.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
        nxt = start.replace(year=start.year + 1)
    elif unit == "M":
        start = when.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        nxt = _add_months(start, 1)
    elif unit == "w":
        day = when.replace(hour=0, minute=0, second=0, microsecond=0)
        start = day - dt.timedelta(days=day.weekday())
        nxt = start + dt.timedelta(days=7)
    elif unit == "d":
        start = when.replace(hour=0, minute=0, second=0, microsecond=0)
        nxt = start + dt.timedelta(days=1)
    elif unit in "hH":
        start = when.replace(minute=0, second=0, microsecond=0)
        nxt = start + dt.timedelta(hours=1)
    elif unit == "m":
        start = when.replace(second=0, microsecond=0)
        nxt = start + dt.timedelta(minutes=1)
    else:
        start = when.replace(microsecond=0)
        nxt = start + dt.timedelta(seconds=1)
    return nxt - dt.timedelta(milliseconds=1) if up else start

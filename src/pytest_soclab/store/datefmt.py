"""Java-style date formats (as Elasticsearch's `format` and ES|QL's DATE_FORMAT/DATE_PARSE use them),
converted to strftime/strptime patterns, plus Elasticsearch's built-in named formats."""

from __future__ import annotations

import datetime as dt
import math
from functools import lru_cache

from .layout import datetime_to_ms, parse_date_ms

NAMED = {
    "strict_date_optional_time": None,  # ISO 8601, handled by parse_date_ms
    "date_optional_time": None,
    "strict_date_optional_time_nanos": None,
    "strict_date_time": "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
    "date_time": "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
    "strict_date_time_no_millis": "yyyy-MM-dd'T'HH:mm:ssXXX",
    "date_time_no_millis": "yyyy-MM-dd'T'HH:mm:ssXXX",
    "strict_date": "yyyy-MM-dd",
    "date": "yyyy-MM-dd",
    "basic_date": "yyyyMMdd",
    "basic_date_time": "yyyyMMdd'T'HHmmss.SSSXXX",
    "basic_date_time_no_millis": "yyyyMMdd'T'HHmmssXXX",
    "strict_date_hour_minute_second": "yyyy-MM-dd'T'HH:mm:ss",
    "date_hour_minute_second": "yyyy-MM-dd'T'HH:mm:ss",
    "strict_date_hour_minute_second_millis": "yyyy-MM-dd'T'HH:mm:ss.SSS",
    "date_hour_minute_second_millis": "yyyy-MM-dd'T'HH:mm:ss.SSS",
    "strict_date_hour_minute": "yyyy-MM-dd'T'HH:mm",
    "date_hour_minute": "yyyy-MM-dd'T'HH:mm",
    "strict_date_hour": "yyyy-MM-dd'T'HH",
    "date_hour": "yyyy-MM-dd'T'HH",
    "strict_hour_minute_second": "HH:mm:ss",
    "hour_minute_second": "HH:mm:ss",
    "strict_hour_minute": "HH:mm",
    "hour_minute": "HH:mm",
    "strict_year_month_day": "yyyy-MM-dd",
    "year_month_day": "yyyy-MM-dd",
    "strict_year_month": "yyyy-MM",
    "year_month": "yyyy-MM",
    "strict_year": "yyyy",
    "year": "yyyy",
    "epoch_millis": "epoch_millis",
    "epoch_second": "epoch_second",
}

DEFAULT_OUTPUT = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"


class DateFormatError(ValueError):
    pass


# Java pattern letter runs -> strftime (duckdb-compatible) directives.
_DIRECTIVES = {
    "yyyy": "%Y", "uuuu": "%Y", "yy": "%y", "uu": "%y", "y": "%Y", "u": "%Y",
    "MMMM": "%B", "MMM": "%b", "MM": "%m", "M": "%-m", "LLLL": "%B", "LLL": "%b", "LL": "%m", "L": "%-m",
    "dd": "%d", "d": "%-d", "DDD": "%j", "D": "%-j",
    "HH": "%H", "H": "%-H", "hh": "%I", "h": "%-I", "kk": "%H", "k": "%-H",
    "mm": "%M", "m": "%-M", "ss": "%S", "s": "%-S",
    "SSS": "%g", "SS": "%g", "S": "%g", "SSSSSS": "%f", "SSSSSSSSS": "%n",
    "a": "%p", "EEEE": "%A", "EEE": "%a", "EE": "%a", "E": "%a",
    "Z": "%z", "ZZ": "%z", "ZZZ": "%z", "XXX": "%:z", "XX": "%z", "X": "%:z", "xxx": "%:z", "xx": "%z",
    "z": "%Z", "zzz": "%Z", "VV": "%Z",
}  # fmt: skip


@lru_cache(maxsize=256)
def java_to_strftime(pattern: str) -> str:
    """A Java DateTimeFormatter pattern as a strftime pattern (raises DateFormatError)."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "'":
            j = pattern.find("'", i + 1)
            if j == i + 1:
                out.append("'")
                i += 2
                continue
            if j < 0:
                raise DateFormatError(f"Invalid format: [{pattern}]: unterminated quote")
            out.append(pattern[i + 1 : j].replace("%", "%%"))
            i = j + 1
            continue
        if ch.isalpha():
            j = i
            while j < n and pattern[j] == ch:
                j += 1
            run = pattern[i:j]
            directive = _DIRECTIVES.get(run)
            if directive is None and ch == "S":
                directive = "%g"
            if directive is None and ch in "yu":
                directive = "%Y"
            if directive is None:
                raise DateFormatError(f"Invalid format: [{pattern}]: Unknown pattern letter: {ch}")
            out.append(directive)
            i = j
            continue
        out.append("%%" if ch == "%" else ch)
        i += 1
    return "".join(out)


def _python_directives(fmt: str) -> str:
    """strftime for Python (no %-x on all platforms for parsing; %g -> milliseconds handled apart)."""
    return fmt.replace("%-", "%").replace("%:z", "%z")


def format_ms(ms: int, pattern: str | None = None, tz: dt.tzinfo | None = None) -> str:
    """Render epoch millis with a Java/named pattern (default: 2024-05-01T10:00:00.000Z)."""
    when = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=ms)
    if tz is not None:
        when = when.astimezone(tz)
    pattern = resolve_name(pattern or DEFAULT_OUTPUT) or DEFAULT_OUTPUT
    if pattern == "epoch_millis":
        return str(ms)
    if pattern == "epoch_second":
        return str(ms // 1000)
    fmt = java_to_strftime(pattern)
    return _render(when, fmt)


def _render(when: dt.datetime, fmt: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(fmt):
        if fmt[i] == "%" and i + 1 < len(fmt):
            spec = fmt[i + 1]
            if spec == "-" and i + 2 < len(fmt):
                val = when.strftime("%" + fmt[i + 2])
                out.append(val.lstrip("0") or "0")
                i += 3
                continue
            if spec == ":" and fmt[i + 2 : i + 3] == "z":
                out.append(_offset(when, colon=True))
                i += 3
                continue
            if spec == "z":
                out.append(_offset(when, colon=False))
            elif spec == "g":
                out.append(f"{when.microsecond // 1000:03d}")
            elif spec == "n":
                out.append(f"{when.microsecond * 1000:09d}")
            else:
                out.append(when.strftime("%" + spec))
            i += 2
            continue
        out.append(fmt[i])
        i += 1
    return "".join(out)


def _offset(when: dt.datetime, *, colon: bool) -> str:
    off = when.utcoffset() or dt.timedelta(0)
    if off == dt.timedelta(0):
        return "Z"
    total = int(off.total_seconds())
    sign = "+" if total >= 0 else "-"
    total = abs(total)
    hh, mm = divmod(total // 60, 60)
    return f"{sign}{hh:02d}:{mm:02d}" if colon else f"{sign}{hh:02d}{mm:02d}"


def resolve_name(pattern: str) -> str | None:
    """A named format's Java pattern (None for the ISO parser); other patterns unchanged."""
    if pattern in NAMED:
        return NAMED[pattern]
    return pattern


def parse_with(text: str, formats: str | None, tz: dt.tzinfo | None = None) -> int | None:
    """Parse `text` with `fmt1||fmt2||...` (default strict_date_optional_time||epoch_millis)."""
    for fmt in (formats or "strict_date_optional_time||epoch_millis").split("||"):
        fmt = fmt.strip()
        java = resolve_name(fmt)
        if java is None:
            ms = _parse_iso(text, tz)
        elif java == "epoch_millis":
            ms = _parse_number(text, 1)
        elif java == "epoch_second":
            ms = _parse_number(text, 1000)
        else:
            ms = _parse_java(text, java, tz)
        if ms is not None:
            return ms
    return None


def _parse_number(text: str, scale: int) -> int | None:
    try:
        value = float(text) * scale
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value) or abs(value) > 253402300799999:
        return None
    return int(value)


def _parse_iso(text: str, tz: dt.tzinfo | None) -> int | None:
    if tz is not None:
        try:
            parsed = dt.datetime.fromisoformat(text.strip())
        except ValueError:
            return parse_date_ms(text) if not text.strip().lstrip("-").isdigit() else None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=tz)
        return datetime_to_ms(parsed)
    if text.strip().lstrip("-").isdigit() and len(text.strip()) != 4:
        return None  # epoch millis is its own format
    return parse_date_ms(text)


def _parse_java(text: str, java: str, tz: dt.tzinfo | None) -> int | None:
    try:
        fmt = java_to_strftime(java)
    except DateFormatError:
        return None
    frac_ms = None
    py = _python_directives(fmt)
    if "%g" in py:
        py = py.replace("%g", "%f")
        frac_ms = True
    if "%n" in py:
        py = py.replace("%n", "%f")
    src = text.strip()
    if src.endswith("Z") and "%z" in py:
        src = src[:-1] + "+0000"
    try:
        parsed = dt.datetime.strptime(src, py)
    except ValueError:
        return None
    del frac_ms
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=tz or dt.timezone.utc)
    return datetime_to_ms(parsed)


def parse_timezone(name: str) -> dt.tzinfo:
    """`+01:00`, `-0800`, `Z`, `UTC` or an IANA zone name."""
    text = name.strip()
    if text in ("Z", "UTC", "utc", "GMT", "Etc/UTC"):
        return dt.timezone.utc
    if text and text[0] in "+-":
        body = text[1:].replace(":", "")
        if body.isdigit() and len(body) in (2, 4):
            hours, minutes = int(body[:2]), int(body[2:] or 0)
            delta = dt.timedelta(hours=hours, minutes=minutes)
            return dt.timezone(delta if text[0] == "+" else -delta)
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(text)
    except Exception:  # noqa: BLE001 - any failure means an unknown zone
        raise DateFormatError(f"Unknown time-zone ID: {name}") from None

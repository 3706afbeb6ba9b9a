"""Time helpers: durations in recipes, and fast ISO-8601 formatting of millisecond epochs.

Formatting is the hottest path of generation (one or more timestamps per document),
so the `YYYY-MM-DDTHH:MM:` prefix is cached per minute instead of calling strftime.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

_DURATION = re.compile(r"^\s*([+-]?\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, None: 1000}


def parse_duration_ms(value: str | float) -> int:
    """'90s', '5m', '2h', '1d', '250ms' or a number of seconds -> milliseconds."""
    if isinstance(value, bool):
        # ValueError, not TypeError: pydantic validators report it as the field's problem.
        raise ValueError(f"not a duration: {value!r}")  # noqa: TRY004
    if isinstance(value, int | float):
        return round(value * 1000)
    m = _DURATION.match(value)
    if m:
        return round(float(m.group(1)) * _UNIT_MS[m.group(2)])
    # Compound: 1h30m, 4m1s, -2m30s.
    text = value.strip()
    sign = -1 if text.startswith("-") else 1
    body = text[1:] if text[:1] in ("+", "-") else text
    parts = _PART.findall(body)
    if not parts or "".join(n + u for n, u in parts) != body:
        raise ValueError(f"not a duration: {value!r} (use e.g. 30s, 5m, 2h, 1d, 1h30m)")
    return sign * round(sum(float(n) * _UNIT_MS[u] for n, u in parts))


def to_ms(dt: datetime) -> int:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return round(dt.timestamp() * 1000)


_prefix_cache: dict[int, str] = {}
_SEC = [f"{s:02d}." for s in range(60)]
_MILLI = [f"{m:03d}Z" for m in range(1000)]


def iso_ms(ms: int) -> str:
    """Epoch milliseconds -> '2025-03-10T14:22:05.123Z'."""
    minute, rest = divmod(ms, 60_000)
    prefix = _prefix_cache.get(minute)
    if prefix is None:
        if len(_prefix_cache) > 200_000:  # bounded: a very long window must not grow it forever
            _prefix_cache.clear()
        prefix = datetime.fromtimestamp(minute * 60, UTC).strftime("%Y-%m-%dT%H:%M:")
        _prefix_cache[minute] = prefix
    return prefix + _SEC[rest // 1000] + _MILLI[rest % 1000]


def hour_of_day(ms: int) -> int:
    return (ms // 3_600_000) % 24


def day_of_week(ms: int) -> int:
    """0 = Monday."""
    return (ms // 86_400_000 + 3) % 7  # 1970-01-01 was a Thursday

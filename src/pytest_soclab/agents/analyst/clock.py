"""Timestamps: ECS strings in, ES|QL literals out."""

from __future__ import annotations

import datetime as dt


def parse(ts: str | None) -> dt.datetime | None:
    if not ts:
        return None
    s = str(ts).strip().replace("Z", "+00:00")
    try:
        d = dt.datetime.fromisoformat(s)
    except ValueError:
        return None
    return d if d.tzinfo else d.replace(tzinfo=dt.UTC)


def iso(d: dt.datetime) -> str:
    return d.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def shift(ts: str, seconds: float) -> str:
    d = parse(ts)
    return iso(d + dt.timedelta(seconds=seconds)) if d else ts


def between(ts: str, lo_s: float, hi_s: float) -> str:
    """An ES|QL condition for @timestamp in [ts + lo_s, ts + hi_s]."""
    return f'@timestamp >= "{shift(ts, lo_s)}" AND @timestamp <= "{shift(ts, hi_s)}"'


def delta(a: str, b: str) -> float:
    """Seconds from a to b."""
    da, db = parse(a), parse(b)
    if not da or not db:
        return 0.0
    return (db - da).total_seconds()


def hm(ts: str) -> str:
    d = parse(ts)
    return d.strftime("%H:%M") if d else ts


def day(ts: str) -> str:
    d = parse(ts)
    return d.strftime("%Y-%m-%d") if d else ts


def short(ts: str) -> str:
    d = parse(ts)
    return d.strftime("%Y-%m-%d %H:%M:%S") if d else ts


def on_days(days: list[str], hhmm: str) -> str:
    """" on both nights" / " on 3 days": how a recurring pattern reads."""
    night = hhmm < "06:00" or hhmm >= "20:00"
    if len(days) == 2:
        return " on both nights" if night else " on both days"
    return f" on {len(days)} {'nights' if night else 'days'}" if len(days) > 2 else ""

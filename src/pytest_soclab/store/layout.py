"""How documents become rows: flattening `_source`, and the stored form of each value type.

One DuckDB table per index; one column per leaf field, named by its dotted path.
Fields that ever hold several values in a document are LIST columns. Dates are
TIMESTAMP (UTC, millisecond precision), IPs are UHUGEINT in IPv6 space (IPv4 mapped
to ::ffff:a.b.c.d, as Lucene encodes them, so numeric order is Elasticsearch's order
and a CIDR is a numeric range).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import math
import re
from functools import lru_cache
from typing import Any

# Reserved columns of every index table.
ID_COL = "_id"
DOC_COL = "_doc"  # position in index order (documents are sorted by @timestamp at load)

V4_MAPPED = 0xFFFF00000000
IPV4_MAX = V4_MAPPED + 0xFFFFFFFF

SQL_TYPES = {
    "keyword": "VARCHAR",
    "constant_keyword": "VARCHAR",
    "wildcard": "VARCHAR",
    "text": "VARCHAR",
    "match_only_text": "VARCHAR",
    "version": "VARCHAR",
    "geo_point": "VARCHAR",
    "flattened": "VARCHAR",
    "nested": "VARCHAR",
    "binary": "VARCHAR",
    "long": "BIGINT",
    "integer": "BIGINT",
    "short": "BIGINT",
    "byte": "BIGINT",
    "unsigned_long": "UBIGINT",
    "double": "DOUBLE",
    "float": "DOUBLE",
    "half_float": "DOUBLE",
    "scaled_float": "DOUBLE",
    "date": "TIMESTAMP",
    "date_nanos": "TIMESTAMP",
    "boolean": "BOOLEAN",
    "ip": "UHUGEINT",
}

# Types whose whole value (object or array of objects) is kept as one JSON string.
OPAQUE_TYPES = frozenset({"flattened", "nested"})


def sql_type(es_type: str, multi: bool) -> str:
    base = SQL_TYPES.get(es_type, "VARCHAR")
    return base + "[]" if multi else base


# ---------------------------------------------------------------------------- flattening


def flatten(doc: dict[str, Any], opaque: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Flatten a nested `_source` into {dotted path: value or list of values}.

    Arrays of objects are flattened as Elasticsearch does for `object` fields (each
    leaf collects the values of every element). Paths in `opaque` keep their value
    whole. Nulls and empty arrays are absent, as they are absent from doc values.
    """
    out: dict[str, Any] = {}
    _flatten_into(doc, "", out, opaque)
    return out


def _add(out: dict[str, Any], path: str, value: Any) -> None:
    if path in out:
        cur = out[path]
        if isinstance(cur, _Multi):
            cur.append(value)
        else:
            out[path] = _Multi((cur, value))
    else:
        out[path] = value


class _Multi(list):  # type: ignore[type-arg]
    """Marks a flattened value that holds several values (vs. a scalar that is a list)."""


def _flatten_into(obj: dict[str, Any], prefix: str, out: dict[str, Any], opaque: frozenset[str]) -> None:
    for key, value in obj.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if value is None:
            continue
        if opaque and path in opaque:
            _add(out, path, value)
            continue
        if isinstance(value, dict):
            _flatten_into(value, path, out, opaque)
        elif isinstance(value, list):
            _flatten_list(value, path, out, opaque)
        else:
            _add(out, path, value)


def _flatten_list(values: list[Any], path: str, out: dict[str, Any], opaque: frozenset[str]) -> None:
    for item in values:
        if item is None:
            continue
        if isinstance(item, dict):
            _flatten_into(item, path, out, opaque)
        elif isinstance(item, list):
            _flatten_list(item, path, out, opaque)
        else:
            _add(out, path, item)


def values_of(value: Any) -> list[Any]:
    """The values of one flattened field as a list."""
    return list(value) if isinstance(value, _Multi) else [value]


def is_multi(value: Any) -> bool:
    return isinstance(value, _Multi)


# ---------------------------------------------------------------------------- IPs


@lru_cache(maxsize=65536)
def ip_to_int(text: str) -> int | None:
    """An IP literal as its 128-bit integer (IPv4 mapped into IPv6), None when not an IP."""
    try:
        addr = ipaddress.ip_address(text.strip())
    except (ValueError, AttributeError):
        return None
    if addr.version == 4:
        return V4_MAPPED + int(addr)
    if addr.ipv4_mapped is not None:
        return V4_MAPPED + int(addr.ipv4_mapped)
    return int(addr)


@lru_cache(maxsize=65536)
def int_to_ip(value: int) -> str:
    if V4_MAPPED <= value <= IPV4_MAX:
        return str(ipaddress.IPv4Address(value - V4_MAPPED))
    return str(ipaddress.IPv6Address(value))


def cidr_range(cidr: str) -> tuple[int, int] | None:
    """[low, high] integer bounds of a CIDR block (or a single address), None when invalid."""
    try:
        net = ipaddress.ip_network(cidr.strip(), strict=False)
    except (ValueError, AttributeError):
        return None
    lo, hi = int(net.network_address), int(net.broadcast_address)
    if net.version == 4:
        return V4_MAPPED + lo, V4_MAPPED + hi
    return lo, hi


# ---------------------------------------------------------------------------- dates

_EPOCH = dt.datetime(1970, 1, 1)
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
_YEAR_ONLY = re.compile(r"^\d{4}$")
_NUMERIC = re.compile(r"^-?\d+(\.\d+)?$")


def parse_date_ms(value: Any) -> int | None:
    """strict_date_optional_time || epoch_millis, as epoch milliseconds (UTC); None when invalid."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return int(value) if MIN_MS <= value <= MAX_MS else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text:
        return None
    if _NUMERIC.match(text):
        if len(text) == 4 and _YEAR_ONLY.match(text):
            return _to_ms(dt.datetime(max(1, int(text)), 1, 1))
        ms = int(float(text))
        return ms if MIN_MS <= ms <= MAX_MS else None
    try:
        if _DATE_ONLY.match(text):
            parts = [int(p) for p in text.split("-")]
            return _to_ms(dt.datetime(parts[0], parts[1], parts[2] if len(parts) > 2 else 1))
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return _to_ms(parsed)


def _to_ms(value: dt.datetime) -> int:
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    delta = value - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


MIN_MS = -62135596800000  # 0001-01-01
MAX_MS = 253402300799999  # 9999-12-31T23:59:59.999


def ms_to_datetime(ms: int) -> dt.datetime:
    """Epoch millis as a naive UTC datetime; ValueError outside years 1..9999."""
    if not MIN_MS <= ms <= MAX_MS:
        raise ValueError(f"date [{ms}] is out of the supported range [0001-01-01, 9999-12-31]")
    return _EPOCH + dt.timedelta(milliseconds=ms)


def format_date(value: dt.datetime | int | None) -> str | None:
    """Elasticsearch's default rendering: 2024-05-01T10:00:00.000Z."""
    if value is None:
        return None
    if isinstance(value, int):
        value = ms_to_datetime(value)
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def datetime_to_ms(value: dt.datetime) -> int:
    return _to_ms(value)


# ---------------------------------------------------------------------------- value coercion


class Malformed(ValueError):
    """A value that does not fit its field type (kept out of the column, like ignore_malformed)."""


def coerce(es_type: str, value: Any) -> Any:
    """A source value as the Python value stored for a field of `es_type`; raises Malformed."""
    if es_type in ("keyword", "constant_keyword", "wildcard", "text", "match_only_text", "version", "binary"):
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float, str)):
            return value if isinstance(value, str) else json.dumps(value)
        raise Malformed(f"cannot index a {type(value).__name__} as {es_type}")
    if es_type in ("long", "integer", "short", "byte", "unsigned_long"):
        if isinstance(value, bool):
            raise Malformed("boolean for a numeric field")
        num: int | None = None
        if isinstance(value, int):
            num = value
        elif isinstance(value, float) and math.isfinite(value):
            num = int(value)
        elif isinstance(value, str):
            try:
                num = int(float(value)) if "." in value or "e" in value.lower() else int(value)
            except (ValueError, OverflowError):
                pass
        if num is None:
            raise Malformed(f"For input string: \"{value}\"")
        lo, hi = (0, 2**64 - 1) if es_type == "unsigned_long" else (-(2**63), 2**63 - 1)
        if not lo <= num <= hi:
            raise Malformed(f"Numeric value ({value}) out of range of {es_type}")
        return num
    if es_type in ("double", "float", "half_float", "scaled_float"):
        if isinstance(value, bool):
            raise Malformed("boolean for a numeric field")
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        raise Malformed(f"For input string: \"{value}\"")
    if es_type in ("date", "date_nanos"):
        ms = parse_date_ms(value)
        if ms is None:
            raise Malformed(f"failed to parse date field [{value}]")
        return ms
    if es_type == "boolean":
        if isinstance(value, bool):
            return value
        if value in ("true", "false"):
            return value == "true"
        if value == "":
            return False
        raise Malformed(f"Failed to parse value [{value}] as only [true] or [false] are allowed.")
    if es_type == "ip":
        if isinstance(value, str):
            num = ip_to_int(value)
            if num is not None:
                return num
        raise Malformed(f"'{value}' is not an IP string literal.")
    if es_type == "geo_point":
        return geo_wkt(value)
    if es_type in OPAQUE_TYPES:
        return json.dumps(value, sort_keys=False, separators=(",", ":"))
    return value if isinstance(value, str) else json.dumps(value)


def geo_wkt(value: Any) -> str:
    """A geo_point in any of Elasticsearch's input forms, as WKT `POINT (lon lat)`."""
    lat = lon = None
    if isinstance(value, dict) and "lat" in value and "lon" in value:
        lat, lon = value["lat"], value["lon"]
    elif isinstance(value, (list, tuple)) and len(value) == 2:
        lon, lat = value
    elif isinstance(value, str):
        text = value.strip()
        if text.upper().startswith("POINT"):
            return text
        parts = text.split(",")
        if len(parts) == 2:
            lat, lon = parts
    try:
        return f"POINT ({float(lon)} {float(lat)})"  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise Malformed(f"failed to parse geo_point [{value}]") from None


def sort_multi(es_type: str, values: list[Any]) -> list[Any]:
    """Multi-values as doc values hold them: keywords sorted and de-duplicated, numbers sorted; text keeps order."""
    if es_type in ("text", "match_only_text", "geo_point") or es_type in OPAQUE_TYPES:
        return values
    try:
        if es_type in ("keyword", "constant_keyword", "wildcard", "version", "boolean", "ip", "binary"):
            return sorted(set(values))
        return sorted(values)
    except TypeError:
        return values

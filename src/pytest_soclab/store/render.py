"""Stored values back to JSON: `_source` (synthetic, as logsdb rebuilds it), `fields`, sort values."""

from __future__ import annotations

import datetime as dt
import json
import re
from functools import lru_cache
from typing import Any

from .catalog import Column, IndexInfo
from .layout import format_date, int_to_ip


def json_value(es_type: str, value: Any) -> Any:
    """One stored value as Elasticsearch shows it in `_source` and `fields`."""
    if value is None:
        return None
    if isinstance(value, list):
        return [json_value(es_type, v) for v in value]
    if es_type == "ip":
        return int_to_ip(int(value))
    if isinstance(value, dt.datetime):
        return format_date(value)
    if es_type in ("flattened", "nested"):
        try:
            return json.loads(value)
        except (TypeError, ValueError):
            return value
    if es_type == "geo_point" and isinstance(value, str):
        m = re.match(r"POINT \(([-\d.eE]+) ([-\d.eE]+)\)", value)
        if m:
            return {"lat": float(m.group(2)), "lon": float(m.group(1))}
    return value


def unflatten(flat: dict[str, Any]) -> dict[str, Any]:
    """{dotted path: value} -> nested objects (paths sorted, as synthetic source orders them)."""
    root: dict[str, Any] = {}
    for path in sorted(flat):
        node = root
        parts = path.split(".")
        for part in parts[:-1]:
            nxt = node.get(part)
            if not isinstance(nxt, dict):
                nxt = node[part] = {}
            node = nxt
        node[parts[-1]] = flat[path]
    return root


@lru_cache(maxsize=1024)
def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile("^" + ".*".join(re.escape(p) for p in pattern.split("*")) + r"(\..*)?$")


def path_matches(path: str, patterns: list[str]) -> bool:
    """Source filtering: a pattern names a field or an object (and everything under it)."""
    return any(_glob(p).match(path) for p in patterns)


def source_filter(spec: Any) -> tuple[bool, list[str], list[str]]:
    """`_source` request value -> (enabled, includes, excludes)."""
    if spec is None or spec is True:
        return True, [], []
    if spec is False:
        return False, [], []
    if isinstance(spec, str):
        return True, [spec], []
    if isinstance(spec, list):
        return True, [str(s) for s in spec], []
    if isinstance(spec, dict):
        inc = spec.get("includes", spec.get("include", []))
        exc = spec.get("excludes", spec.get("exclude", []))
        inc = [inc] if isinstance(inc, str) else list(inc or [])
        exc = [exc] if isinstance(exc, str) else list(exc or [])
        return True, [str(s) for s in inc], [str(s) for s in exc]
    from pytest_soclab.errors import parsing_exception

    raise parsing_exception("[_source] must be a boolean, a string, an array or an object")


def _converter(es_type: str) -> Any:
    """A fast per-value converter for one field type (None: the stored value is already JSON)."""
    if es_type == "ip":
        return lambda v: int_to_ip(int(v))
    if es_type in ("date", "date_nanos"):
        return format_date
    if es_type in ("flattened", "nested", "geo_point"):
        return lambda v, t=es_type: json_value(t, v)
    return None


def render_plan(info: IndexInfo, includes: list[str], excludes: list[str]) -> list[tuple[str, tuple[str, ...], Any]]:
    """(path, its parts, value converter) of each field `_source` shows, in sorted path order."""
    cache: dict[Any, Any] = info.__dict__.setdefault("_render_plans", {})
    key = (tuple(includes), tuple(excludes))
    plan = cache.get(key)
    if plan is None:
        plan = []
        for path in sorted(info.fields):
            if includes and not path_matches(path, includes):
                continue
            if excludes and path_matches(path, excludes):
                continue
            plan.append((path, tuple(path.split(".")), _converter(info.fields[path].fdef.type)))
        cache[key] = plan
    return plan


def build_source(info: IndexInfo, row: dict[str, Any], includes: list[str], excludes: list[str]) -> dict[str, Any]:
    """Synthetic `_source`: non-null fields, nested by path, single-value arrays as scalars."""
    root: dict[str, Any] = {}
    for path, parts, conv in render_plan(info, includes, excludes):
        value = row.get(path)
        if value is None:
            continue
        if type(value) is list:
            if conv is not None:
                value = [conv(v) for v in value if v is not None]
            if len(value) == 1:
                value = value[0]
            elif not value:
                continue
        elif conv is not None:
            value = conv(value)
        node = root
        for part in parts[:-1]:
            nxt = node.get(part)
            if nxt is None or type(nxt) is not dict:
                nxt = node[part] = {}
            node = nxt
        node[parts[-1]] = value
    return root


def field_values(info: IndexInfo, row: dict[str, Any], patterns: list[tuple[str, str | None]]) -> dict[str, list[Any]]:
    """The `fields` section of a hit: every matching mapped field (multi-fields too) as a list."""
    from .datefmt import format_ms
    from .layout import datetime_to_ms

    out: dict[str, list[Any]] = {}
    for name in info.field_names(mapped=False):  # a field without values renders nothing
        fmt = None
        matched = False
        for pat, pfmt in patterns:
            if re.match("^" + ".*".join(re.escape(p) for p in pat.split("*")) + "$", name):
                matched, fmt = True, pfmt
                break
        if not matched:
            continue
        ref = info.lookup(name)
        if ref is None:
            continue
        value = row.get(ref.column)
        if value is None:
            continue
        vals = value if isinstance(value, list) else [value]
        if ref.type in ("date", "date_nanos") and fmt:
            out[name] = [format_ms(datetime_to_ms(v), fmt) for v in vals]
        else:
            out[name] = [json_value(ref.type, v) for v in vals]
    return out


def column_of(info: IndexInfo, path: str) -> Column | None:
    return info.fields.get(path)

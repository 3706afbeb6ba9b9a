"""`?filter_path` and `?pretty`, applied to every JSON answer."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_KEEP = object()


@lru_cache(maxsize=256)
def _compile(spec: str) -> tuple[tuple[tuple[re.Pattern[str] | str, ...], bool], ...]:
    """Each filter: its dotted parts (`*` one level, `**` any depth) and whether it excludes (`-`)."""
    out = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        exclude = item.startswith("-")
        parts = []
        for part in (item[1:] if exclude else item).split("."):
            if part == "**":
                parts.append("**")
            else:
                parts.append(re.compile("^" + ".*".join(re.escape(p) for p in part.split("*")) + "$"))
        out.append((tuple(parts), exclude))
    return tuple(out)


def _matches(parts: tuple[Any, ...], key: str) -> list[tuple[Any, ...]]:
    """The remaining paths after `key` is consumed ((): the whole subtree matches)."""
    if not parts:
        return [()]
    head, rest = parts[0], parts[1:]
    if head == "**":
        return [*_matches(rest, key), parts]
    return [rest] if head.match(key) else []


def _include(value: Any, paths: list[tuple[Any, ...]]) -> Any:
    if any(p == () or p == ("**",) for p in paths):
        return value
    if isinstance(value, list):
        items = [_include(v, paths) for v in value]
        kept = [v for v in items if v is not _KEEP]
        return kept if kept else _KEEP
    if not isinstance(value, dict):
        return _KEEP
    out = {}
    for key, sub in value.items():
        nxt = [r for p in paths for r in _matches(p, key)]
        if nxt:
            kept = _include(sub, nxt)
            if kept is not _KEEP:
                out[key] = kept
    return out if out else _KEEP


def _exclude(value: Any, paths: list[tuple[Any, ...]]) -> Any:
    if isinstance(value, list):
        return [_exclude(v, paths) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, sub in value.items():
        nxt = [r for p in paths for r in _matches(p, key)]
        if any(r == () for r in nxt):
            continue
        out[key] = _exclude(sub, nxt) if nxt else sub
    return out


def filter_path(payload: Any, spec: str | None) -> Any:
    """The answer with only what `filter_path` keeps (`{}` when nothing is left, as Elasticsearch sends)."""
    if not spec or not isinstance(payload, (dict, list)):
        return payload
    filters = _compile(spec)
    includes = [p for p, ex in filters if not ex]
    excludes = [p for p, ex in filters if ex]
    if includes:
        payload = _include(payload, includes)
        if payload is _KEEP:
            return {}
    if excludes:
        payload = _exclude(payload, excludes)
    return payload

"""The metadata APIs: _cat/indices, _mapping and _resolve/index over a catalog."""

from __future__ import annotations

from typing import Any

from .catalog import Catalog
from .indexexpr import resolve
from .mappings import properties


def human_size(n: int) -> str:
    """Elasticsearch's byte-size rendering: 225b, 12.4kb, 1.2mb, 3gb."""
    value = float(n)
    for unit in ("b", "kb", "mb", "gb", "tb"):
        if value < 1024 or unit == "tb":
            if unit == "b":
                return f"{int(value)}b"
            text = f"{value:.1f}".rstrip("0").rstrip(".")
            return f"{text}{unit}"
        value /= 1024
    return f"{n}b"


def cat_indices(catalog: Catalog, pattern: str = "*") -> list[dict[str, Any]]:
    """Like GET /_cat/indices/<pattern>?format=json (expand_wildcards=all, as cat indices does)."""
    found = resolve(pattern or "*", catalog.indices.values(), expand_hidden=True)
    rows = []
    for info in found:
        size = human_size(info.size_bytes)
        rows.append(
            {
                "health": "green",
                "status": "open",
                "index": info.concrete,
                "uuid": info.uuid,
                "pri": "1",
                "rep": "0",
                "docs.count": str(info.count),
                "docs.deleted": "0",
                "store.size": size,
                "pri.store.size": size,
                "dataset.size": size,
            }
        )
    return sorted(rows, key=lambda r: r["index"])


def get_mappings(catalog: Catalog, expr: str) -> dict[str, Any]:
    """Like GET /<expr>/_mapping: {concrete index: {"mappings": {...}}}."""
    found = resolve(expr, catalog.indices.values(), allow_no_indices=True)
    out: dict[str, Any] = {}
    for info in found:
        mapping: dict[str, Any] = {}
        if info.kind == "data_stream":
            mapping["_data_stream_timestamp"] = {"enabled": True}
        mapping["properties"] = properties(info.mapping())
        out[info.concrete] = {"mappings": mapping}
    return dict(sorted(out.items()))


def resolve_index(catalog: Catalog, expr: str) -> dict[str, Any]:
    """Like GET /_resolve/index/<expr>."""
    found = resolve(expr, catalog.indices.values(), allow_no_indices=True)
    indices, streams = [], []
    for info in found:
        if info.kind == "data_stream":
            indices.append(
                {"name": info.concrete, "attributes": ["hidden", "open"], "data_stream": info.name}
            )
            streams.append({"name": info.name, "backing_indices": [info.concrete], "timestamp_field": "@timestamp"})
        else:
            indices.append({"name": info.name, "attributes": ["open"]})
    return {"indices": indices, "aliases": [], "data_streams": streams}

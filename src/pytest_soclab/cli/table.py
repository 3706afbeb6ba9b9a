"""`soclab query --format table`: a tool's answer as an aligned text table, for reading in a terminal.

ES|QL answers are already tables (rows, or columns with `--columnar`); search hits
become one row per hit with their `_source` flattened to dotted field names; the
indices list and mappings are rows too. Anything else is one row per dotted key.
"""

from __future__ import annotations

import json
from typing import Any

Rows = tuple[list[str], list[list[Any]]]


def render(tool: str, payload: Any, *, columnar: bool = False) -> str:
    columns, rows = table_rows(tool, payload, columnar=columnar)
    return format_table(columns, rows)


def table_rows(tool: str, payload: Any, *, columnar: bool = False) -> Rows:
    if not isinstance(payload, dict):
        return ["value"], [[payload]]
    if tool == "esql_query" and "columns" in payload:
        return _esql(payload, columnar)
    if tool == "es_search" and "hits" in payload:
        return _hits(payload)
    if tool == "list_indices" and isinstance(payload.get("indices"), list):
        return _records(payload["indices"])
    if tool == "get_mappings":
        return _mappings(payload)
    return ["key", "value"], [[k, v] for k, v in flatten(payload).items()]


def _esql(payload: dict[str, Any], columnar: bool) -> Rows:
    columns = [c["name"] for c in payload["columns"]]
    values = payload.get("values") or []
    if columnar:  # one list per column: turn it back into rows
        values = [list(row) for row in zip(*values)]
    return columns, values


def _hits(payload: dict[str, Any]) -> Rows:
    hits = payload["hits"].get("hits") or []
    if not hits and payload.get("aggregations"):
        return ["key", "value"], [[k, v] for k, v in flatten(payload["aggregations"]).items()]
    records = [{"_index": h.get("_index"), "_id": h.get("_id"), **flatten(h.get("_source") or {})} for h in hits]
    return _records(records)


def _records(records: list[dict[str, Any]]) -> Rows:
    columns: list[str] = []
    for r in records:
        columns += [k for k in r if k not in columns]
    return columns, [[r.get(c) for c in columns] for r in records]


def _mappings(payload: dict[str, Any]) -> Rows:
    rows = []
    for index, body in payload.items():
        props = (body or {}).get("mappings", {}).get("properties", {})
        rows += [[index, field, kind] for field, kind in _fields(props)]
    return ["index", "field", "type"], rows


def _fields(props: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for name, spec in props.items():
        if "properties" in spec:
            out += _fields(spec["properties"], f"{prefix}{name}.")
        else:
            out.append((f"{prefix}{name}", spec.get("type", "object")))
    return out


def flatten(value: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"host": {"name": "web-01"}} -> {"host.name": "web-01"} (lists are kept as values)."""
    out: dict[str, Any] = {}
    for k, v in value.items():
        if isinstance(v, dict) and v:
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return ", ".join(cell(v) for v in value)
    return json.dumps(value, ensure_ascii=False)


def format_table(columns: list[str], rows: list[list[Any]]) -> str:
    text = [[cell(v).replace("\n", " ") for v in row] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in text)]) for i, c in enumerate(columns)]
    line = "  ".join("-" * w for w in widths)
    out = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip(), line]
    out += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in text]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)

"""Stored `_source` of wide indices: each document's synthetic source, rendered once at build.

A recorded Sysmon index has 160+ columns. Returning a page of its documents from the columns
means reading one vector of every column (DuckDB decompresses whole vectors, so 100 scattered
documents touch most of them) and nesting 160 values per document in Python: 40-50 ms for
`size: 100`. A table of (d, src) with a primary key on d turns that into an index lookup of one
column and a JSON parse. The source is rendered from the stored columns by one SQL statement
that follows `render.build_source` (and by `build_source` itself for a type it does not
render), so it is the same object the columns give; a row that cannot be rendered keeps a NULL
source and is read from the columns, as are documents of an index with overlay documents.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from .catalog import Column, IndexInfo
from .layout import DOC_COL, SQL_TYPES
from .render import build_source, path_matches, render_plan
from .sqlutil import ident, in_values, string

# Indices wider than this get a stored source (narrower ones read their columns as fast).
WIDE_COLUMNS = 64
_BATCH = 2048


def select_columns(info: IndexInfo) -> list[str]:
    """SQL of every stored column of `info`, in field order: rows are read by position (a column's
    name in the table need not be its field's) through fetchall, which reads a UHUGEINT whole
    (Arrow's decimal128 wraps the upper half of IPv6)."""
    return [col.sql for col in info.fields.values()]


def by_index(keys: Iterable[tuple[Any, ...]]) -> dict[int, list[int]]:
    """(index position, _doc, ...) rows -> the documents wanted of each index."""
    wanted: dict[int, list[int]] = {}
    for key in keys:
        wanted.setdefault(int(key[0]), []).append(int(key[1]))
    return wanted


def build_source_table(con: duckdb.DuckDBPyConnection, info: IndexInfo) -> str:
    """Create `info`'s stored-source table when the index is wide; its name, or "" for none."""
    if len(info.fields) <= WIDE_COLUMNS or not info.count:
        return ""
    name = f"{info.table}__src"
    con.execute(f"CREATE TABLE {ident(name)} (d BIGINT PRIMARY KEY, src VARCHAR)")
    doc = ident(DOC_COL)
    rendered = source_sql(info)
    if rendered is not None:
        try:
            con.execute(f"INSERT INTO {ident(name)} SELECT {doc}, {rendered} FROM {ident(info.table)} ORDER BY {doc}")
            return name
        except duckdb.Error:
            con.execute(f"DELETE FROM {ident(name)}")
    # in Python, document by document (a type the SQL does not render, or a value it fails on)
    names = list(info.fields)
    select = f"SELECT {', '.join(select_columns(info))} FROM {ident(info.table)}"
    for start in range(0, info.count, _BATCH):  # _doc numbers the documents 0..count-1
        window = f" WHERE {doc} >= {start} AND {doc} < {start + _BATCH} ORDER BY {doc}"
        srcs = [_render(info, dict(zip(names, row))) for row in con.execute(select + window).fetchall()]
        batch = pa.table({"d": pa.array(range(start, start + len(srcs)), pa.int64()), "src": pa.array(srcs, pa.string())})
        con.register("__src_batch", batch)
        con.execute(f"INSERT INTO {ident(name)} SELECT d, src FROM __src_batch")
        con.unregister("__src_batch")
    return name


def source_sql(info: IndexInfo) -> str | None:
    """SQL rendering each document's `_source` as `build_source` does (fields nested in sorted
    path order, absent ones left out, one-value lists as scalars), or None when a field's type
    is not rendered here or a field is also another's object."""
    tree: dict[str, Any] = {}
    for path, parts, _ in render_plan(info, [], []):
        node = tree
        for part in parts[:-1]:
            nxt = node.setdefault(part, {})
            if not isinstance(nxt, dict):
                return None
            node = nxt
        if parts[-1] in node:
            return None
        leaf = _value_sql(info.fields[path])
        if leaf is None:
            return None
        node[parts[-1]] = leaf
    return f"('{{' || coalesce({_members(tree)}, '') || '}}')"


def _members(node: dict[str, Any]) -> str:
    """SQL of an object's members ("key":value, ...), NULL when none has a value."""
    parts = []
    for key, sub in node.items():
        head = string(orjson.dumps(key).decode() + ":")
        if isinstance(sub, dict):
            parts.append(f"({head} || '{{' || {_members(sub)} || '}}')")
        else:
            parts.append(f"({head} || {sub})")
    return f"nullif(concat_ws(',', {', '.join(parts)}), '')"


_DATE_FORMAT = "'%Y-%m-%dT%H:%M:%S.%gZ'"  # render.format_date: milliseconds, Z


def _value_sql(col: Column) -> str | None:
    """SQL of one field's JSON value, NULL when it has none."""
    t = col.fdef.type
    if t in ("flattened", "nested"):
        x = col.sql  # kept as its JSON text (render.json_value parses it back)
        return f"(CASE WHEN json_valid({x}) THEN {x} ELSE to_json({x}) END)"
    if t == "geo_point" or t not in SQL_TYPES:
        return None
    if t == "ip":
        one = "__ip_str(({v})::VARCHAR)"
    elif t in ("date", "date_nanos"):
        one = f"strftime({{v}}, {_DATE_FORMAT})"
    elif SQL_TYPES[t] == "DOUBLE":
        one = "(CASE WHEN isfinite({v}) THEN {v} END)"  # NaN is no JSON (and no indexed value)
    else:
        one = "{v}"
    c = col.sql
    if not col.multi:
        return f"to_json({one.format(v=c)})"
    kept = f"list_filter(list_transform({c}, lambda __v: {one.format(v='__v')}), lambda __v: __v IS NOT NULL)"
    return (f"(CASE WHEN len({kept}) = 0 THEN NULL WHEN len({kept}) = 1 THEN to_json({kept}[1]) "
            f"ELSE to_json({kept}) END)")  # fmt: skip


def _render(info: IndexInfo, row: dict[str, Any]) -> str | None:
    try:
        return _dumps(build_source(info, row, [], []))
    except (TypeError, ValueError, OverflowError):
        return None


def _dumps(source: dict[str, Any]) -> str | None:
    try:
        return orjson.dumps(source).decode()
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: read from the columns at fetch time
        return None


def read_stored(query: Callable[[str], list[tuple[Any, ...]]], rel: str, docs: Iterable[int]) -> dict[int, dict[str, Any]]:
    """The stored sources of documents `docs` in the stored-source table `rel`, unfiltered.
    Documents whose source was not stored are left out: the caller reads their columns."""
    wanted = sorted({int(d) for d in docs})
    if not wanted:
        return {}
    rows = query(f"SELECT d, src FROM {rel} WHERE {in_values('d', [str(d) for d in wanted])}")
    return {int(d): orjson.loads(src) for d, src in rows if src is not None}


def filter_source(info: IndexInfo, source: dict[str, Any], includes: list[str], excludes: list[str]) -> dict[str, Any]:
    """Source filtering of a stored source, with `build_source`'s semantics: a leaf field is kept
    when an include names it or an object above it, and no exclude does. Key order is kept (the
    fields under one object are contiguous in sorted path order, so the order is the one
    `build_source` would give the kept fields)."""
    if not includes and not excludes:
        return source
    out: dict[str, Any] = {}
    _filter_into(info, source, "", out, includes, excludes)
    return out


def _filter_into(info: IndexInfo, node: dict[str, Any], prefix: str, out: dict[str, Any], includes: list[str],
                 excludes: list[str]) -> None:  # fmt: skip
    for key, value in node.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict) and path not in info.fields:
            sub: dict[str, Any] = {}
            _filter_into(info, value, path, sub, includes, excludes)
            if sub:
                out[key] = sub
        elif (not includes or path_matches(path, includes)) and not (excludes and path_matches(path, excludes)):
            out[key] = value

"""Turning documents into index tables: flatten, type by mapping, stage as Arrow, sort by time."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from .catalog import Column, IndexInfo, is_data_stream_name
from .layout import DOC_COL, ID_COL, Malformed, coerce, flatten, is_multi, ms_to_datetime, sort_multi, sql_type
from .mappings import FieldDef, MappingSet
from .sqlutil import ident

CHUNK_ROWS = 100_000
SEQ_COL = "__seq"

_ARROW = {
    "VARCHAR": pa.string(),
    "BIGINT": pa.int64(),
    "UBIGINT": pa.uint64(),
    "DOUBLE": pa.float64(),
    "TIMESTAMP": pa.timestamp("ms"),
    "BOOLEAN": pa.bool_(),
    "UHUGEINT": pa.string(),  # staged as decimal text, cast in SQL (Arrow has no 128-bit integer)
}

_STR_TYPES = frozenset({"keyword", "constant_keyword", "wildcard", "text", "match_only_text", "version"})


@dataclass
class _ColState:
    fdef: FieldDef
    multi: bool = False
    values: list[Any] = field(default_factory=list)


class TableBuilder:
    """Accumulates one index's documents column by column, in chunks of Arrow tables."""

    def __init__(self, name: str, mapping: MappingSet, fixed: dict[str, Column] | None = None):
        self.name = name
        self.mapping = mapping
        self.opaque = mapping.opaque_paths()
        self.cols: dict[str, _ColState] = {}
        if fixed:
            for path, col in fixed.items():
                self.cols[path] = _ColState(col.fdef, col.multi)
        self.ids: list[str] = []
        self.seqs: list[int] = []
        self.count = 0
        self.chunks: list[pa.Table] = []
        self.malformed: dict[str, int] = {}
        self.ignored: set[str] = set()
        self.min_ts: int | None = None

    def add(self, doc_id: str, source: dict[str, Any]) -> None:
        row = len(self.ids)
        self.ids.append(str(doc_id))
        self.seqs.append(self.count)
        self.count += 1
        for path, value in flatten(source, self.opaque).items():
            state = self.cols.get(path)
            if state is None:
                if path in self.ignored:
                    continue
                first = value[0] if is_multi(value) else value
                fdef = self.mapping.resolve(path, first)
                if fdef is None:
                    self.ignored.add(path)
                    continue
                state = self.cols[path] = _ColState(fdef)
            vals = state.values
            if len(vals) < row:
                vals.extend([None] * (row - len(vals)))
            ftype = state.fdef.type
            if is_multi(value):
                items = []
                for item in value:
                    try:
                        items.append(coerce(ftype, item))
                    except Malformed:
                        self.malformed[path] = self.malformed.get(path, 0) + 1
                items = sort_multi(ftype, items)
                if len(items) > 1:
                    state.multi = True
                vals.append(items if len(items) > 1 else (items[0] if items else None))
                continue
            if ftype in _STR_TYPES and type(value) is str:
                vals.append(value)
                continue
            try:
                vals.append(coerce(ftype, value))
            except Malformed:
                self.malformed[path] = self.malformed.get(path, 0) + 1
                vals.append(None)
        if len(self.ids) >= CHUNK_ROWS:
            self.flush()

    def flush(self) -> None:
        n = len(self.ids)
        if n == 0:
            return
        arrays: dict[str, pa.Array] = {
            ID_COL: pa.array(self.ids, pa.string()),
            SEQ_COL: pa.array(self.seqs, pa.int64()),
        }
        for path, state in self.cols.items():
            vals = state.values
            if len(vals) < n:
                vals.extend([None] * (n - len(vals)))
            arrays[path] = _to_arrow(state.fdef.type, state.multi, vals)
            state.values = []
        self.chunks.append(pa.table(arrays))
        self.ids, self.seqs = [], []

    def columns(self) -> dict[str, Column]:
        return {p: Column(p, s.fdef, s.multi) for p, s in sorted(self.cols.items())}


def _to_arrow(es_type: str, multi: bool, vals: list[Any]) -> pa.Array:
    stype = sql_type(es_type, False)
    atype = _ARROW[stype]
    if stype == "UHUGEINT":
        vals = [None if v is None else ([str(x) for x in v] if isinstance(v, list) else str(v)) for v in vals]
    if multi:
        vals = [v if v is None or isinstance(v, list) else [v] for v in vals]
        atype = pa.list_(atype)
    return pa.array(vals, atype)


def stage_sql(chunk_name: str, chunk: pa.Table, columns: dict[str, Column], *, doc_offset: int | None = None) -> str:
    """SELECT turning one staged chunk into the final column types (missing -> NULL, scalar -> [x])."""
    have = set(chunk.column_names)
    parts = [ident(ID_COL), ident(SEQ_COL) if doc_offset is None else f"{ident(SEQ_COL)} + {doc_offset} AS {ident(DOC_COL)}"]
    for path, col in columns.items():
        target = col.sql_type
        if path not in have:
            parts.append(f"NULL::{target} AS {ident(path)}")
            continue
        is_list = pa.types.is_list(chunk.schema.field(path).type)
        expr = ident(path)
        if col.multi and not is_list:
            expr = f"CASE WHEN {expr} IS NULL THEN NULL ELSE [{expr}] END"
        parts.append(f"CAST({expr} AS {target}) AS {ident(path)}")
    return f"SELECT {', '.join(parts)} FROM {chunk_name}"


def write_index(
    con: duckdb.DuckDBPyConnection, builder: TableBuilder, table: str, *, data_stream: bool
) -> IndexInfo:
    """Create `table` from a builder's chunks, sorted by @timestamp, and describe it."""
    builder.flush()
    columns = builder.columns()
    selects = []
    for i, chunk in enumerate(builder.chunks):
        view = f"__stage_{table}_{i}"
        con.register(view, chunk)
        selects.append(stage_sql(view, chunk, columns))
    order = f"{ident('@timestamp')} NULLS LAST, {ident(SEQ_COL)}" if "@timestamp" in columns else ident(SEQ_COL)
    union = " UNION ALL ".join(selects) if selects else _empty_select(columns)
    body = ", ".join(ident(p) for p in columns)
    con.execute(
        f"CREATE TABLE {ident(table)} AS SELECT {ident(ID_COL)}, "
        f"(row_number() OVER (ORDER BY {order}) - 1)::BIGINT AS {ident(DOC_COL)}"
        f"{', ' + body if body else ''} FROM ({union}) ORDER BY {ident(DOC_COL)}"
    )
    for i in range(len(builder.chunks)):
        con.unregister(f"__stage_{table}_{i}")
    builder.chunks = []
    min_ts = None
    if "@timestamp" in columns and not columns["@timestamp"].multi:
        rows = con.execute(f"SELECT min({ident('@timestamp')}) FROM {ident(table)}").fetchall()
        row = rows[0] if rows else None
        min_ts = row[0] if row else None
    name = builder.name
    backing = None
    if data_stream:
        day = (min_ts or dt.datetime(1970, 1, 1)).strftime("%Y.%m.%d")
        backing = f".ds-{name}-{day}-000001"
    size = _table_size(con, table)
    return IndexInfo(
        name=name,
        kind="data_stream" if data_stream else "index",
        backing=backing,
        table=table,
        count=builder.count,
        fields=columns,
        size_bytes=size,
        uuid=hashlib.sha1(f"{name}:{builder.count}".encode()).hexdigest()[:22],
    )


def _empty_select(columns: dict[str, Column]) -> str:
    parts = [f"NULL::VARCHAR AS {ident(ID_COL)}", f"NULL::BIGINT AS {ident(SEQ_COL)}"]
    parts += [f"NULL::{c.sql_type} AS {ident(p)}" for p, c in columns.items()]
    return f"SELECT {', '.join(parts)} WHERE FALSE"


def _table_size(con: duckdb.DuckDBPyConnection, table: str) -> int:
    try:
        rows = con.execute(
            "SELECT sum(estimated_size) FROM duckdb_tables() WHERE table_name = ?", [table]
        ).fetchall()
        return int(rows[0][0] or 0) if rows else 0
    except duckdb.Error:
        return 0


def group_docs(
    docs: Iterable[tuple[str, str, dict[str, Any]]],
    mapping_for: Callable[[str], MappingSet],
    progress: Callable[[int], None] | None = None,
) -> dict[str, TableBuilder]:
    builders: dict[str, TableBuilder] = {}
    n = 0
    for stream, doc_id, source in docs:
        builder = builders.get(stream)
        if builder is None:
            builder = builders[stream] = TableBuilder(stream, mapping_for(stream))
        builder.add(doc_id, source)
        n += 1
        if progress is not None and n % 10_000 == 0:
            progress(n)
    if progress is not None and n % 10_000:
        progress(n)
    return builders


def default_mapping(name: str, explicit: dict[str, Any] | None) -> MappingSet:
    from .mappings import parse_mapping

    ds = is_data_stream_name(name)
    if explicit is None:
        return MappingSet(data_stream=ds, use_ecs=True)
    flat, dynamic = parse_mapping(explicit, source=f"mapping of {name}")
    # An explicit mapping is the whole truth for its fields; ECS fills in unmapped ECS names
    # only for data streams, as ecs@mappings does.
    return MappingSet(explicit=flat, dynamic=dynamic, data_stream=ds, use_ecs=ds)


__all__ = ["TableBuilder", "write_index", "group_docs", "default_mapping", "stage_sql", "ms_to_datetime"]

"""Turning documents into index tables: flatten, type by mapping, stage as Arrow, sort by time.

Fast path: pyarrow infers the nested structure of a chunk of `_source` dicts in C; the
struct is flattened per field (not per document) and type conversions run in DuckDB SQL.
A chunk pyarrow cannot represent (a field that is a list in one document and a scalar in
another, mixed value types) takes the Python path, document by document; a single column
that needs Python coercion (numbers given as strings...) is coerced alone.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from .catalog import Column, IndexInfo, is_data_stream_name
from .layout import (
    DOC_COL, ID_COL, MAX_MS, MIN_MS, OPAQUE_TYPES, Malformed, coerce, flatten, ip_to_int, is_multi, ms_to_datetime,
    sort_multi,
    sql_type,
)  # fmt: skip
from .mappings import FieldDef, MappingSet
from .shapes import ShapeExtractor, Unsupported
from .sqlutil import ident

CHUNK_ROWS = 100_000
SEQ_COL = "__seq"
# A source field named as one of the store's own columns is not stored but counted as malformed:
# Elasticsearch rejects `_id` in a source (a metadata field), and here it would replace the ids.
RESERVED = frozenset({ID_COL, SEQ_COL, DOC_COL})

_ARROW = {
    "VARCHAR": pa.string(),
    "BIGINT": pa.int64(),
    "UBIGINT": pa.uint64(),
    "DOUBLE": pa.float64(),
    "TIMESTAMP": pa.timestamp("ms"),
    "BOOLEAN": pa.bool_(),
    "UHUGEINT": pa.string(),  # staged as decimal text, cast in SQL (Arrow has no 128-bit integer)
}

STR_TYPES = frozenset({"keyword", "constant_keyword", "wildcard", "text", "match_only_text", "version", "binary"})
_INT_TYPES = frozenset({"long", "integer", "short", "byte", "unsigned_long"})
_FLOAT_TYPES = frozenset({"double", "float", "half_float", "scaled_float"})
_SORTED_UNIQUE = frozenset({"keyword", "constant_keyword", "wildcard", "version", "boolean", "ip", "binary"})


class _Fallback(Exception):
    """This chunk (or column) needs the Python path."""


class NativeFallback(Exception):
    """Columns read by DuckDB (`add_arrow`) that only the Python path converts exactly."""


@dataclass
class _ColState:
    fdef: FieldDef
    multi: bool = False
    values: list[Any] = field(default_factory=list)
    name: str = ""  # the column's name in the table when not the path (Column.name)


@dataclass
class Chunk:
    """Staged rows: `_id`, `__seq` and one Arrow column per field, with how to convert each in SQL."""

    table: pa.Table
    convs: dict[str, str]  # path -> "" (stored form) | "ip_dec" | "ip_u64" | "ip_hl" | "date_str" | "date_ms"
    lists: set[str]
    multi_checked: bool = False


def conv_sql(kind: str, x: str) -> str:
    """SQL turning one staged value `x` into its stored form."""
    if kind == "ip_dec":
        return f"TRY_CAST({x} AS UHUGEINT)"
    if kind == "ip_u64":
        return f"{x}::UHUGEINT"
    if kind == "ip_hl":
        return f"({x}.hi::UHUGEINT * {1 << 64}::UHUGEINT + {x}.lo)"
    if kind == "date_str":
        return _in_date_range(
            f"coalesce(date_trunc('millisecond', timezone('UTC', TRY_CAST({x} AS TIMESTAMPTZ))), "
            f"{_epoch_ms(f'TRY_CAST({x} AS BIGINT)')})"
        )
    if kind == "date_ms":
        return _epoch_ms(f"{x}::BIGINT")
    return x


def _epoch_ms(ms: str) -> str:
    # the years the Python path holds (layout.MIN_MS..MAX_MS): a date outside is malformed, on both paths
    return f"(CASE WHEN {ms} BETWEEN {MIN_MS} AND {MAX_MS} THEN epoch_ms({ms}) END)"


def _in_date_range(ts: str) -> str:
    # DuckDB eliminates the repeated expression
    return f"(CASE WHEN {ts} BETWEEN TIMESTAMP '0001-01-01' AND TIMESTAMP '9999-12-31 23:59:59.999' THEN {ts} END)"


class TableBuilder:
    """Accumulates one index's documents in chunks of Arrow tables."""

    def __init__(
        self,
        name: str,
        mapping: MappingSet,
        fixed: dict[str, Column] | None = None,
        *,
        fast: bool = True,
        native: bool = False,
    ):
        self.name = name
        self.mapping = mapping
        self.opaque = mapping.opaque_paths()
        self.cols: dict[str, _ColState] = {}
        self._taken = {ID_COL.lower(), SEQ_COL.lower(), DOC_COL.lower()}  # column names, as DuckDB compares them
        if fixed:
            for path, col in fixed.items():
                self.cols[path] = _ColState(col.fdef, col.multi, name=col.name)
                self._taken.add((col.name or path).lower())
        self.fast = fast
        # fed Arrow columns by add_arrow (no Python documents to look back at)
        self.native = native
        self.ids: list[str] = []
        self.sources: list[dict[str, Any]] = []
        self.count = 0
        self.chunks: list[Chunk] = []
        self.malformed: dict[str, int] = {}
        self.ignored: set[str] = set()
        self.fast_chunks = 0
        self.shapes = ShapeExtractor(self.opaque)

    def add(self, doc_id: str, source: dict[str, Any]) -> None:
        self.ids.append(str(doc_id))
        self.sources.append(source)
        self.count += 1
        if len(self.ids) >= CHUNK_ROWS:
            self.flush()

    def add_arrow(self, ids: pa.Array, sources: pa.StructArray) -> None:
        """A batch of documents already in columns (see native.py); raises NativeFallback when
        the batch needs the Python path."""
        seq0 = self.count
        self.count += len(ids)
        leaves: dict[str, pa.Array] = {}
        try:
            self._walk(sources, "", leaves)
            chunk = self._leaves_chunk(self._key_arrays(seq0, ids), leaves)
        except _Fallback:
            raise NativeFallback from None
        self.chunks.append(chunk)
        self.fast_chunks += 1

    def flush(self) -> None:
        if not self.ids:
            return
        seq0 = self.count - len(self.ids)
        chunk = None
        if self.fast:
            try:
                chunk = self._arrow_chunk(seq0)
                self.fast_chunks += 1
            except _Fallback:
                chunk = None
        if chunk is None:
            chunk = self._python_chunk(seq0)
        self.chunks.append(chunk)
        self.ids, self.sources = [], []

    def columns(self) -> dict[str, Column]:
        return {p: Column(p, s.fdef, s.multi, s.name) for p, s in sorted(self.cols.items())}

    def _new_column(self, path: str, fdef: FieldDef) -> _ColState:
        """A new field's column: named by its path, unless DuckDB would take that name for one
        already here (names differing only in case are one name to it)."""
        name, n = path, 0
        while name.lower() in self._taken:
            n += 1
            name = f"{path}~{n}"
        self._taken.add(name.lower())
        return _ColState(fdef, name="" if name == path else name)

    def _key_arrays(self, seq0: int, ids: pa.Array | None = None) -> dict[str, pa.Array]:
        """The `_id` and `__seq` columns every chunk path starts its table with."""
        ids = pa.array(self.ids, pa.string()) if ids is None else ids
        return {ID_COL: ids, SEQ_COL: pa.array(range(seq0, seq0 + len(ids)), pa.int64())}

    # ---------------------------------------------------------------- fast path

    def _arrow_chunk(self, seq0: int) -> Chunk:
        try:
            leaves = self._shaped_leaves()
        except _Fallback:
            leaves = self._inferred_leaves()
        return self._leaves_chunk(self._key_arrays(seq0), leaves)

    def _leaves_chunk(self, arrays: dict[str, pa.Array], leaves: dict[str, pa.Array]) -> Chunk:
        convs: dict[str, str] = {}
        lists: set[str] = set()
        for path, raw in leaves.items():
            state = self.cols.get(path)
            if state is None:
                if path in self.ignored:
                    continue
                if path in RESERVED:
                    self.malformed[path] = self.malformed.get(path, 0) + len(raw) - raw.null_count
                    continue
                first = self._first_source_value(path, raw)
                if first is None:
                    continue
                fdef = self.mapping.resolve(path, first)
                if fdef is None:
                    self.ignored.add(path)
                    continue
                state = self.cols[path] = self._new_column(path, fdef)
            is_list = pa.types.is_list(raw.type)
            try:
                staged, kind = self._convert(path, state.fdef.type, raw, is_list)
            except _Fallback:
                if self.native:
                    # a column of floats may have held integers, which coerce differently
                    raise NativeFallback from None
                staged, kind = self._coerce_column(path, state, raw, is_list)
            arrays[path] = staged
            convs[path] = kind
            if is_list:
                lists.add(path)
        return Chunk(pa.table(arrays), convs, lists)

    def _first_source_value(self, path: str, raw: pa.Array) -> Any:
        """The first value of a new field as its document has it (an Arrow column of ints and
        floats is all floats, but dynamic mapping goes by the first value's own type)."""
        if pa.types.is_list(raw.type):
            at = pc.index(pc.is_valid(pc.list_flatten(raw)), True).as_py()
            row = -1 if at < 0 else pc.list_parent_indices(raw)[at].as_py()
        else:
            row = pc.index(pc.is_valid(raw), True).as_py()
        if row < 0:
            return None
        if self.native:
            # dynamic mapping goes by the first value's JSON type; a float column may have
            # started with an integer (1 and 1.5 read as one float column)
            first = _first_value(raw)
            if isinstance(first, float) and first.is_integer():
                raise NativeFallback
            return first
        source = self.sources[row]
        value = flatten(source, self.opaque).get(path) if isinstance(source, dict) else None
        if value is None:
            return _first_value(raw)
        return value[0] if is_multi(value) else value

    def _shaped_leaves(self) -> dict[str, pa.Array]:
        """Leaf columns through the compiled per-shape extractors (see shapes.py)."""
        try:
            rows = self.shapes.rows(self.sources)
        except Unsupported:
            raise _Fallback from None
        cols = self.shapes.columns_of(rows)
        del rows
        leaves: dict[str, pa.Array] = {}
        nested: list[tuple[str, pa.Array]] = []
        for (path, _), values, sample in zip(self.shapes.columns.items(), cols, self.shapes.samples):
            if path in self.ignored:
                continue  # a field the mapping does not index
            arr = _column_array(values, sample)
            t = arr.type
            if pa.types.is_struct(t) or (pa.types.is_list(t) and pa.types.is_struct(t.value_type)):
                nested.append((path, arr))  # objects where a shape had None, arrays of objects
            elif pa.types.is_list(t) and pa.types.is_list(t.value_type):
                raise _Fallback
            elif not pa.types.is_null(t) and not (pa.types.is_list(t) and pa.types.is_null(t.value_type)):
                leaves[path] = arr
        for path, arr in nested:
            self._walk(pa.StructArray.from_arrays([arr], names=[path]), "", leaves)
        return leaves

    def _inferred_leaves(self) -> dict[str, pa.Array]:
        """Leaf columns of the nested type pyarrow infers (slower; takes any shape mix)."""
        try:
            arr = pa.array(self.sources)
        except (pa.ArrowException, OverflowError, TypeError, ValueError):
            raise _Fallback from None
        if not pa.types.is_struct(arr.type):
            raise _Fallback
        leaves: dict[str, pa.Array] = {}
        self._walk(arr, "", leaves)
        return leaves

    def _walk(self, arr: pa.Array, prefix: str, out: dict[str, pa.Array]) -> None:
        for i, f in enumerate(arr.type):
            path = f"{prefix}{f.name}"
            if path in self.opaque:
                raise _Fallback
            child = pc.struct_field(arr, [i])
            t = child.type
            if pa.types.is_struct(t):
                self._walk(child, path + ".", out)
            elif pa.types.is_list(t) or pa.types.is_large_list(t):
                vt = t.value_type
                if pa.types.is_struct(vt):
                    # an array of objects: every leaf collects the values of all elements
                    sub: dict[str, pa.Array] = {}
                    self._walk(child.values, path + ".", sub)
                    for sp, values in sub.items():
                        if pa.types.is_list(values.type) or pa.types.is_struct(values.type) or sp in out:
                            raise _Fallback
                        out[sp] = pa.ListArray.from_arrays(child.offsets, values, mask=child.is_null())
                elif pa.types.is_list(vt) or pa.types.is_large_list(vt):
                    raise _Fallback
                elif pa.types.is_null(vt):
                    continue
                elif path in out:
                    raise _Fallback  # one path reached twice: the document path merges the values
                else:
                    out[path] = child
            elif pa.types.is_null(t):
                continue
            elif path in out:
                raise _Fallback
            else:
                out[path] = child

    def _convert(self, path: str, es_type: str, raw: pa.Array, is_list: bool) -> tuple[pa.Array, str]:
        t = raw.type.value_type if is_list else raw.type

        def cast(target: pa.DataType, safe: bool = True) -> pa.Array:
            return pc.cast(raw, pa.list_(target) if is_list else target, safe=safe)

        if es_type in STR_TYPES:
            if pa.types.is_string(t):
                return raw, ""
            if pa.types.is_integer(t) or pa.types.is_boolean(t):
                return cast(pa.string()), ""
            raise _Fallback
        if es_type in _INT_TYPES:
            if pa.types.is_integer(t):
                return cast(pa.int64()), ""
            if pa.types.is_floating(t):
                values = raw.values if is_list else raw
                top = pc.max(pc.abs(values)).as_py() if len(values) else None
                if top is not None and not top < 2.0**63:
                    raise _Fallback  # beyond a long (or not finite): malformed, counted by coercion
                return cast(pa.int64(), safe=False), ""
            raise _Fallback
        if es_type in _FLOAT_TYPES:
            if pa.types.is_integer(t) or pa.types.is_floating(t):
                return cast(pa.float64()), ""
            raise _Fallback
        if es_type in ("date", "date_nanos"):
            if pa.types.is_string(t):
                return raw, "date_str"
            if pa.types.is_integer(t):
                return cast(pa.int64()), "date_ms"
            if pa.types.is_timestamp(t):
                return cast(pa.timestamp("ms"), safe=False), ""
            raise _Fallback
        if es_type == "ip":
            if pa.types.is_string(t):
                return self._ip_column(path, raw, is_list)
            raise _Fallback
        if es_type == "boolean":
            if pa.types.is_boolean(t):
                return raw, ""
            raise _Fallback
        raise _Fallback

    def _ip_column(self, path: str, raw: pa.Array, is_list: bool) -> tuple[pa.Array, str]:
        """IP text -> integers, parsed once per distinct address (a corpus repeats its addresses)."""
        texts = raw.values if is_list else raw
        enc = pc.dictionary_encode(texts)
        nums = [ip_to_int(v) for v in enc.dictionary.to_pylist()]
        bad = [v is None for v in nums]
        if any(bad):
            failed = pc.sum(pc.take(pa.array(bad, pa.bool_()), enc.indices).cast(pa.int64())).as_py() or 0
            if failed:
                self.malformed[path] = self.malformed.get(path, 0) + failed
        staged, kind = _ip_stage(nums, enc.indices)
        if is_list:
            staged = pa.ListArray.from_arrays(raw.offsets, staged, mask=raw.is_null())
        return staged, kind

    def _coerce_column(self, path: str, state: _ColState, raw: pa.Array, is_list: bool) -> tuple[pa.Array, str]:
        """Python coercion of one column (Elasticsearch's coercion rules, malformed values counted)."""
        ftype = state.fdef.type
        out: list[Any] = []
        for value in raw.to_pylist():
            if value is None:
                out.append(None)
                continue
            items = value if is_list else [value]
            conv = []
            for item in items:
                if item is None:
                    continue
                try:
                    conv.append(coerce(ftype, item))
                except Malformed:
                    self.malformed[path] = self.malformed.get(path, 0) + 1
            if is_list:
                out.append(sort_multi(ftype, conv) or None)
            else:
                out.append(conv[0] if conv else None)
        stype = sql_type(ftype, False)
        vals = out
        if stype == "UHUGEINT":
            vals = [None if v is None else ([str(x) for x in v] if isinstance(v, list) else str(v)) for v in out]
        atype = _ARROW[stype]
        return pa.array(vals, pa.list_(atype) if is_list else atype), "ip_dec" if stype == "UHUGEINT" else ""

    # ---------------------------------------------------------------- Python path

    def _python_chunk(self, seq0: int) -> Chunk:
        start = {p: len(s.values) for p, s in self.cols.items()}
        for p, s in self.cols.items():
            s.values = []
        del start
        for row, source in enumerate(self.sources):
            if not isinstance(source, dict):
                continue
            for path, value in flatten(source, self.opaque).items():
                self._add_value(row, path, value)
        n = len(self.ids)
        arrays = self._key_arrays(seq0)
        convs: dict[str, str] = {}
        lists: set[str] = set()
        for path, state in self.cols.items():
            vals = state.values
            if not vals:
                continue
            if len(vals) < n:
                vals.extend([None] * (n - len(vals)))
            has_list = any(isinstance(v, list) for v in vals)
            arrays[path] = _to_arrow(state.fdef.type, has_list, vals)
            convs[path] = "ip_dec" if sql_type(state.fdef.type, False) == "UHUGEINT" else ""
            if has_list:
                lists.add(path)
            state.values = []
        return Chunk(pa.table(arrays), convs, lists, multi_checked=False)

    def _add_value(self, row: int, path: str, value: Any) -> None:
        state = self.cols.get(path)
        if state is None:
            if path in self.ignored:
                return
            if path in RESERVED:
                self.malformed[path] = self.malformed.get(path, 0) + 1
                return
            first = value[0] if is_multi(value) else value
            fdef = self.mapping.resolve(path, first)
            if fdef is None:
                self.ignored.add(path)
                return
            state = self.cols[path] = self._new_column(path, fdef)
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
            vals.append(items if len(items) > 1 else (items[0] if items else None))
            return
        if ftype in STR_TYPES and type(value) is str:
            vals.append(value)
            return
        try:
            vals.append(coerce(ftype, value))
        except Malformed:
            self.malformed[path] = self.malformed.get(path, 0) + 1
            vals.append(None)


def _ip_stage(nums: list[int | None], indices: pa.Array) -> tuple[pa.Array, str]:
    """Integer addresses for Arrow (which has no 128-bit integer): one uint64 when every address
    is IPv4 (mapped: below 2**64), else a {hi, lo} struct; `indices` picks from `nums`."""
    if all(v is None or v < 1 << 64 for v in nums):
        return pc.take(pa.array(nums, pa.uint64()), indices), "ip_u64"
    mask = (1 << 64) - 1
    hi = pa.array([None if v is None else v >> 64 for v in nums], pa.uint64())
    lo = pa.array([None if v is None else v & mask for v in nums], pa.uint64())
    both = pa.StructArray.from_arrays([hi, lo], names=["hi", "lo"], mask=pa.array([v is None for v in nums]))
    return pc.take(both, indices), "ip_hl"


_CONVERT_ERRORS = (pa.ArrowException, OverflowError, TypeError, ValueError)
_LIST_ONLY = frozenset({list, type(None)})


def _column_array(values: tuple[Any, ...], sample: Any) -> pa.Array:
    """One column of leaf values as Arrow, of the type pyarrow would infer for it.

    A typed conversion is cheaper than inference but lenient in places (a string fills a
    list of characters, a float is truncated into an integer): it is used only where it is
    strict — strings, booleans, lists of strings once every value is known to be a list."""
    kind = type(sample)
    try:
        if kind is str:
            return pa.array(values, pa.string())
        if kind is bool:
            return pa.array(values, pa.bool_())
        if kind is list and type(next((e for e in sample if e is not None), None)) is str:
            if set(map(type, values)) <= _LIST_ONLY:
                return pa.array(values, pa.list_(pa.string()))
    except _CONVERT_ERRORS:
        pass
    try:
        return pa.array(values)
    except _CONVERT_ERRORS:
        raise _Fallback from None


def _first_value(raw: pa.Array) -> Any:
    arr = raw
    if pa.types.is_list(arr.type):
        arr = pc.list_flatten(arr)
    arr = arr.drop_null()
    return arr[0].as_py() if len(arr) else None


def _to_arrow(es_type: str, multi: bool, vals: list[Any]) -> pa.Array:
    stype = sql_type(es_type, False)
    atype = _ARROW[stype]
    if stype == "UHUGEINT":
        vals = [None if v is None else ([str(x) for x in v] if isinstance(v, list) else str(v)) for v in vals]
    if multi:
        vals = [v if v is None or isinstance(v, list) else [v] for v in vals]
        atype = pa.list_(atype)
    return pa.array(vals, atype)


# ---------------------------------------------------------------------------- SQL of staged chunks


def _element_sql(col: Column, kind: str, x: str, is_list: bool) -> str:
    """Converted, doc-values-ordered value of one staged column (list or scalar)."""
    es_type = col.fdef.type
    if not is_list:
        return conv_sql(kind, x)
    inner = f"list_transform({x}, lambda __e: {conv_sql(kind, '__e')})" if kind else x
    if es_type in _SORTED_UNIQUE:
        return f"list_sort(list_distinct({inner}))"
    if es_type in ("text", "match_only_text") or es_type in OPAQUE_TYPES or es_type == "geo_point":
        return f"list_filter({inner}, lambda __f: __f IS NOT NULL)"
    return f"list_sort(list_filter({inner}, lambda __f: __f IS NOT NULL))"


def staged(chunk: Chunk, columns: dict[str, Column]) -> pa.Table:
    """The chunk's table as DuckDB is to see it: each column under its name in the store (a path
    stored under another name must not meet its case twin: DuckDB would read one for both)."""
    names, keys = [], {ID_COL, SEQ_COL}
    for n in chunk.table.column_names:
        if n in keys:  # the chunk's own key columns come first; a field of that name comes later
            keys.discard(n)
            names.append(n)
        else:
            names.append(columns[n].name if n in columns and columns[n].name else n)
    return chunk.table.rename_columns(names)


def stage_sql(view: str, chunk: Chunk, columns: dict[str, Column], *, doc_offset: int | None = None) -> str:
    """SELECT turning one staged chunk (registered as `staged` gives it) into the final columns
    (missing -> NULL, scalar -> [x])."""
    have = set(chunk.table.column_names)
    parts = [ident(ID_COL), ident(SEQ_COL) if doc_offset is None else f"{ident(SEQ_COL)} + {doc_offset} AS {ident(DOC_COL)}"]
    for path, col in columns.items():
        target = col.sql_type
        if path not in have:
            parts.append(f"NULL::{target} AS {col.sql}")
            continue
        is_list = path in chunk.lists
        expr = _element_sql(col, chunk.convs.get(path, ""), col.sql, is_list)
        if col.multi and not is_list:
            expr = f"CASE WHEN ({expr}) IS NULL THEN NULL ELSE [{expr}] END"
        elif not col.multi and is_list:
            expr = f"({expr})[1]"
        elif is_list:
            expr = f"nullif({expr}, [])"  # an empty array is no value, as in doc values
        parts.append(f"CAST({expr} AS {target}) AS {col.sql}")
    return f"SELECT {', '.join(parts)} FROM {view}"


def _longest(column: pa.ChunkedArray) -> int:
    """Most elements in one list of a staged list column (no list that long: not multi-valued)."""
    lengths = [pc.max(pc.list_value_length(c)).as_py() for c in column.chunks]
    return max((n for n in lengths if n is not None), default=0)


def _chunk_stats(con: duckdb.DuckDBPyConnection, view: str, chunk: Chunk, builder: TableBuilder) -> dict[str, int]:
    """Marks list columns that really hold several values; returns, for columns converted in
    SQL, how many values were given (to count the ones the conversion rejects)."""
    exprs: list[tuple[str, str, str]] = []
    for path in chunk.table.column_names:
        if path in (ID_COL, SEQ_COL):
            continue
        state = builder.cols.get(path)
        if state is None:
            continue
        kind = chunk.convs.get(path, "")
        c = ident(state.name or path)
        is_list = path in chunk.lists
        if is_list and not state.multi and _longest(chunk.table.column(path)) > 1:
            distinct = f"list_distinct({c})" if state.fdef.type in _SORTED_UNIQUE else f"list_filter({c}, lambda __f: __f IS NOT NULL)"
            exprs.append(("multi", path, f"coalesce(max(len({distinct})), 0)"))
        if kind == "date_str":
            given = f"sum(len(list_distinct({c})))" if is_list else f"count({c})"
            exprs.append(("given", path, f"coalesce({given}, 0)"))
    given: dict[str, int] = {}
    if not exprs:
        return given
    row = con.execute(f"SELECT {', '.join(e for _, _, e in exprs)} FROM {view}").fetchall()[0]
    for (what, path, _), value in zip(exprs, row):
        if what == "multi" and int(value or 0) > 1:
            builder.cols[path].multi = True
        elif what == "given":
            given[path] = given.get(path, 0) + int(value or 0)
    return given


def write_index(
    con: duckdb.DuckDBPyConnection, builder: TableBuilder, table: str, *, data_stream: bool
) -> IndexInfo:
    """Create `table` from a builder's chunks, sorted by @timestamp, and describe it."""
    builder.flush()
    views = []
    given: dict[str, int] = {}
    names = builder.columns()  # the columns' names are known once every chunk is flushed
    for i, chunk in enumerate(builder.chunks):
        view = f"__stage_{table}_{i}"
        con.register(view, staged(chunk, names))
        views.append(view)
        for path, n in _chunk_stats(con, view, chunk, builder).items():
            given[path] = given.get(path, 0) + n
    columns = builder.columns()
    selects = [stage_sql(v, c, columns) for v, c in zip(views, builder.chunks)]
    ts_sortable = "@timestamp" in columns and not columns["@timestamp"].multi
    order = f"{ident('@timestamp')} NULLS LAST, {ident(SEQ_COL)}" if ts_sortable else ident(SEQ_COL)
    union = " UNION ALL ".join(selects) if selects else _empty_select(columns)
    body = ", ".join(c.sql for c in columns.values())
    # sort once; a streaming row_number over the sorted rows numbers them in that order
    con.execute(
        f"CREATE TABLE {ident(table)} AS SELECT {ident(ID_COL)}, (row_number() OVER () - 1)::BIGINT AS {ident(DOC_COL)}"
        f"{', ' + body if body else ''} FROM (SELECT * FROM ({union}) ORDER BY {order})"
    )
    for view in views:
        con.unregister(view)
    builder.chunks = []
    if given:
        kept = con.execute(
            "SELECT " + ", ".join(
                f"coalesce(sum(len({columns[p].sql})), 0)" if columns[p].multi else f"count({columns[p].sql})" for p in given
            ) + f" FROM {ident(table)}"
        ).fetchall()[0]
        for (path, n), k in zip(given.items(), kept):
            if n > int(k or 0):
                builder.malformed[path] = builder.malformed.get(path, 0) + n - int(k or 0)
    min_ts = None
    if ts_sortable:
        rows = con.execute(f"SELECT min({ident('@timestamp')}) FROM {ident(table)}").fetchall()
        min_ts = rows[0][0] if rows else None
    name = builder.name
    backing = None
    if data_stream:
        # DuckDB hands a date Python cannot hold (before year 1) back as text
        day = (min_ts if isinstance(min_ts, dt.datetime) else dt.datetime(1970, 1, 1)).strftime("%Y.%m.%d")
        backing = f".ds-{name}-{day}-000001"
    return IndexInfo(
        name=name,
        kind="data_stream" if data_stream else "index",
        backing=backing,
        table=table,
        count=builder.count,
        fields=columns,
        size_bytes=0,
        uuid=hashlib.sha1(f"{name}:{builder.count}".encode()).hexdigest()[:22],
        mapped=declared_only(builder.mapping, columns),
    )


def declared_only(mapping: MappingSet, columns: dict[str, Column]) -> dict[str, FieldDef]:
    """Fields the mapping declares that no document has (mapped, but no column)."""
    if not mapping.declared:
        return {}
    return {p: d for p, d in sorted(mapping.explicit.items()) if p not in columns}


def _empty_select(columns: dict[str, Column]) -> str:
    parts = [f"NULL::VARCHAR AS {ident(ID_COL)}", f"NULL::BIGINT AS {ident(SEQ_COL)}"]
    parts += [f"NULL::{c.sql_type} AS {c.sql}" for c in columns.values()]
    return f"SELECT {', '.join(parts)} WHERE FALSE"


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
    from .mappings import alerts_fields, is_alerts_index, parse_mapping

    ds = is_data_stream_name(name)
    if explicit is None:
        if is_alerts_index(name):
            return MappingSet(explicit=dict(alerts_fields()), data_stream=False, use_ecs=True, declared=True)
        # Data streams get ecs@mappings' dynamic templates: an ECS field is typed by ECS when a
        # document first has it, and is not in the mapping before (as in Elasticsearch).
        return MappingSet(data_stream=ds, use_ecs=True)
    flat, dynamic = parse_mapping(explicit, source=f"mapping of {name}")
    # An explicit mapping is the whole truth for its fields, all of them mapped from the start;
    # ECS fills in unmapped ECS names only for data streams, as ecs@mappings does.
    return MappingSet(explicit=flat, dynamic=dynamic, data_stream=ds, use_ecs=ds, declared=True)


__all__ = ["NativeFallback", "TableBuilder", "write_index", "declared_only", "group_docs", "default_mapping", "stage_sql", "staged", "ms_to_datetime", "Chunk"]

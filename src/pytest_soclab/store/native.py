"""NDJSON files parsed by DuckDB's own JSON reader instead of Python's.

Parsing a million documents into Python objects and converting them back to columns is most
of a load's time. DuckDB reads NDJSON in parallel, straight into Arrow columns, and those
columns go through the same conversion as the Python path's (`TableBuilder.add_arrow`). It is
used only where the two cannot differ, and gives up on anything else: the caller then reads
the file with Python, so an unusual file loads as before, only slower.

What this path takes: every line an object with a string `_id` and an object `_source` (what
`soclab corpus build` writes and search hits look like), whose values are strings, integers,
floats, booleans, objects and arrays of those, each field of one JSON type throughout the
file. What makes it give up: another line format (bulk actions, bare sources, whose ids come
from line numbers), a field whose JSON type varies (DuckDB would turn it into text where the
Python path applies Elasticsearch's coercion to each value), integers beyond 64 bits, keys
that differ only in case (DuckDB renames one of them), malformed JSON (the Python path reports
the line), and whatever `TableBuilder.add_arrow` refuses.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from .build import CHUNK_ROWS, NativeFallback, TableBuilder
from .mappings import MappingSet
from .sqlutil import ident, string

# The types DuckDB may infer for a leaf, and the type to read it as. Dates and times are read
# as the text they are (DuckDB would parse them; the mapping decides).
_LEAF_TYPES = {
    "varchar": "VARCHAR",
    "bigint": "BIGINT",
    "double": "DOUBLE",
    "boolean": "BOOLEAN",
    "timestamp": "VARCHAR",
    "timestamp with time zone": "VARCHAR",
    "date": "VARCHAR",
    "time": "VARCHAR",
    "uuid": "VARCHAR",
    # a field null in every document: no column, as for the Python path
    '"null"': "VARCHAR",
    "null": "VARCHAR",
}
_RENAMED = re.compile(r"^(.*)_[0-9]+$")
# a float column holding integers this large may have had integers beyond 64 bits
_EXACT_FLOAT = float(2**53)


def _reader(path: Path, columns: str | None = None) -> str:
    opts = "format='newline_delimited', map_inference_threshold=-1"
    opts += f", columns={columns}" if columns else ", sample_size=-1"
    return f"read_json({string(str(path))}, {opts})"


def _type_sql(t: duckdb.typing.DuckDBPyType, path: tuple[str, ...], empty: list[tuple[str, ...]]) -> str | None:
    """The type to read a detected type as, or None when this path does not take it. Arrays
    DuckDB could not type (JSON[]: always empty, or of mixed types) are read as text arrays and
    listed in `empty`: each batch must show them empty (what the Python path skips)."""
    tid = t.id
    if tid == "struct":
        names = [n for n, _ in t.children]
        lowered = {n.lower() for n in names}
        parts = []
        for name, child in t.children:
            m = _RENAMED.match(name)
            if m and m.group(1).lower() in lowered:
                return None  # DuckDB renamed one of two keys that differ only in case
            sub = _type_sql(child, (*path, name), empty)
            if sub is None:
                return None
            parts.append(f"{ident(name)} {sub}")
        return f"STRUCT({', '.join(parts)})" if parts else None
    if tid == "list":
        item = t.children[0][1]
        if str(item).lower() == "json":
            empty.append(path)
            return "VARCHAR[]"
        sub = _type_sql(item, path, empty)
        return None if sub is None else f"{sub}[]"
    return _LEAF_TYPES.get(str(t).lower())


def _field(arr: pa.Array, path: tuple[str, ...]) -> pa.Array:
    for name in path:
        arr = pc.struct_field(arr, [arr.type.get_field_index(name)])
    return arr


def read_native(
    path: Path,
    builder: TableBuilder,
    *,
    progress: Callable[[int], None] | None = None,
) -> bool:
    """Fill `builder` from an NDJSON file of `{"_id", "_source"}` lines; False when this path
    does not take the file (the builder may then hold part of it: discard it)."""
    con = duckdb.connect(":memory:")
    try:
        return _read(con, path, builder, progress)
    except (duckdb.Error, NativeFallback):
        return False
    finally:
        con.close()


def _read(con: duckdb.DuckDBPyConnection, path: Path, builder: TableBuilder, progress: Callable[[int], None] | None) -> bool:
    detected = con.sql(f"SELECT * FROM {_reader(path)}")
    types = dict(zip(detected.columns, detected.types))
    id_type, source_type = types.get("_id"), types.get("_source")
    if id_type is None or source_type is None or str(id_type).lower() != "varchar" or source_type.id != "struct":
        return False
    empty: list[tuple[str, ...]] = []
    source_sql = _type_sql(source_type, (), empty)
    if source_sql is None:
        return False
    columns = "{" + f"'_id': 'VARCHAR', '_source': {string(source_sql)}" + "}"
    batches = con.sql(f"SELECT _id, _source FROM {_reader(path, columns)}").to_arrow_reader(CHUNK_ROWS)
    for batch in batches:
        ids, sources = batch.column(0), batch.column(1)
        if ids.null_count or sources.null_count or pc.any(pc.equal(ids, "")).as_py():
            return False  # such lines get ids from their line numbers: the Python path's job
        _check_floats(sources)
        if any(len(_field(sources, p).values) for p in empty):
            return False
        builder.add_arrow(ids, sources)
        if progress is not None:
            progress(builder.count)
    return True


def _check_floats(arr: pa.Array) -> None:
    """Give up on a float column holding integers beyond 2**53: in a mixed column they may have
    been integers beyond 64 bits, which the Python path treats apart."""
    t = arr.type
    if pa.types.is_struct(t):
        for i in range(t.num_fields):
            _check_floats(pc.struct_field(arr, [i]))
    elif pa.types.is_list(t):
        _check_floats(arr.values)
    elif pa.types.is_floating(t):
        top = pc.max(pc.abs(arr)).as_py()
        if top is not None and top >= _EXACT_FLOAT and top != float("inf"):
            raise NativeFallback


def load_file(
    name: str,
    path: Path,
    mapping: MappingSet,
    *,
    progress: Callable[[int], None] | None = None,
) -> TableBuilder | None:
    """A builder holding the file's documents, or None when the Python path must read it."""
    builder = TableBuilder(name, mapping, native=True)
    return builder if read_native(path, builder, progress=progress) else None


__all__ = ["load_file", "read_native"]

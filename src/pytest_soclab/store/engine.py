"""An opened store: a DuckDB cursor on the (cached) base file, the catalog merged with any
overlay, the SQL relation of each index, and the per-query warning recorder."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from pytest_soclab.errors import SoclabError

from .build import TableBuilder, stage_sql
from .catalog import CATALOG_TABLE, Catalog, Column, IndexInfo, is_data_stream_name
from .layout import DOC_COL, ID_COL, int_to_ip, ip_to_int
from .limits import STORE_MEMORY_LIMIT
from .mappings import MappingSet
from .sqlutil import ident, literal
from .terms import TermDict
from .tokens import TextIndex

# ---------------------------------------------------------------------------- per-process base cache

_BASE_LOCK = threading.Lock()
# (path, mtime, size) -> (connection, catalog, SQL prefix of the attached database)
_BASE: dict[tuple[str, int, int], tuple[duckdb.DuckDBPyConnection, Catalog, str]] = {}
_ATTACHED = itertools.count(1)
_TOKENS = itertools.count(1)
_OVERLAYS = itertools.count(1)

# query token -> warning ids raised while it ran (filled by the __w UDF, possibly from DuckDB threads)
_WARNINGS: dict[int, set[int]] = {}
_VALUES: dict[int, dict[int, str]] = {}  # query token -> warning id -> first failing value
_WARN_LOCK = threading.Lock()


def _udf_warn(token: pa.Array, wid: pa.Array, cond: pa.Array) -> pa.Array:
    if len(cond) and pc.any(cond).as_py():
        hit = pc.filter(wid, pc.fill_null(cond, False))
        tok = token[0].as_py()
        with _WARN_LOCK:
            bucket = _WARNINGS.get(tok)
            if bucket is not None:
                bucket.update(v for v in pc.unique(hit).to_pylist() if v is not None)
    return cond


def _udf_warn_value(token: pa.Array, wid: pa.Array, cond: pa.Array, value: pa.Array) -> pa.Array:
    """Like __w, and keeps the first failing value (warnings quote it)."""
    if len(cond) and pc.any(cond).as_py():
        mask = pc.fill_null(cond, False)
        ids = pc.filter(wid, mask).to_pylist()
        vals = pc.filter(value, mask).to_pylist()
        tok = token[0].as_py()
        with _WARN_LOCK:
            bucket = _WARNINGS.get(tok)
            if bucket is not None:
                for i, v in zip(ids, vals):
                    if i is not None and i not in bucket:
                        bucket.add(i)
                        _VALUES.setdefault(tok, {})[i] = "" if v is None else str(v)
    return cond


def _udf_ip_str(values: pa.Array) -> pa.Array:
    # takes the address as decimal text: Arrow's decimal128 cannot hold every 128-bit value
    return pa.array([None if v is None else int_to_ip(int(v)) for v in values.to_pylist()], pa.string())


def _udf_ip_parse(values: pa.Array) -> pa.Array:
    out = [None if v is None else ip_to_int(v) for v in values.to_pylist()]
    return pa.array([None if v is None else str(v) for v in out], pa.string())


def register_udfs(con: duckdb.DuckDBPyConnection) -> None:
    con.create_function(
        "__w", _udf_warn, ["BIGINT", "INTEGER", "BOOLEAN"], "BOOLEAN", type="arrow", side_effects=True,
        null_handling="special",
    )  # fmt: skip
    con.create_function(
        "__wv", _udf_warn_value, ["BIGINT", "INTEGER", "BOOLEAN", "VARCHAR"], "BOOLEAN", type="arrow",
        side_effects=True, null_handling="special",
    )  # fmt: skip
    con.create_function("__ip_str", _udf_ip_str, ["VARCHAR"], "VARCHAR", type="arrow", null_handling="special")
    # parsed as decimal text: Arrow has no 128-bit integer type; cast to UHUGEINT by the caller
    con.create_function(
        "__ip_parse_text", _udf_ip_parse, ["VARCHAR"], "VARCHAR", type="arrow", null_handling="special"
    )


def _base(path: Path) -> tuple[duckdb.DuckDBPyConnection, Catalog, str]:
    """The process-wide read-only connection to a store file (cached while the file is unchanged).

    The file is ATTACHed to a fresh in-memory database: DuckDB caches database instances by
    path, so a plain connect after an atomic rebuild could hand back the replaced file."""
    try:
        st = path.stat()
    except OSError as exc:
        raise SoclabError(f"store file {path}: {exc.strerror or exc}") from None
    resolved = str(path.resolve())
    key = (resolved, st.st_mtime_ns, st.st_size)
    with _BASE_LOCK:
        hit = _BASE.get(key)
        if hit is not None:
            return hit
        for old in [k for k in _BASE if k[0] == resolved]:
            del _BASE[old]  # a rebuilt file: forget the old one (open backends keep their cursor)
        alias = f"store{next(_ATTACHED)}"
        con = duckdb.connect(":memory:")
        try:
            _configure(con)
            con.execute(f"ATTACH {literal(resolved)} AS {ident(alias)} (READ_ONLY)")
            rows = con.execute(f"SELECT json FROM {ident(alias)}.main.{ident(CATALOG_TABLE)}").fetchall()
            row = rows[0]
        except (duckdb.Error, IndexError) as exc:
            con.close()
            raise SoclabError(f"store file {path} is not a soclab store: {exc}") from None
        catalog = Catalog.from_json(json.loads(row[0]))
        register_udfs(con)
        entry = (con, catalog, f"{ident(alias)}.main.")
        _BASE[key] = entry
        return entry


def _configure(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("SET TimeZone = 'UTC'")
    # bounded on every opened store, not only when served: one agent's runaway query fails with
    # a 429 circuit_breaking_exception instead of taking the machine's memory
    con.execute(f"SET memory_limit = '{STORE_MEMORY_LIMIT}'")


def _memory_base() -> tuple[duckdb.DuckDBPyConnection, Catalog, str]:
    con = duckdb.connect(":memory:")
    _configure(con)
    register_udfs(con)
    return con, Catalog(), ""


# ---------------------------------------------------------------------------- the engine


BITMAP_CACHE_BYTES = 64 << 20


@dataclass
class Engine:
    con: duckdb.DuckDBPyConnection
    catalog: Catalog
    relations: dict[str, str]
    now_fixed: dt.datetime | None = None
    lock: threading.RLock = field(default_factory=threading.RLock)
    memo: dict[Any, Any] = field(default_factory=dict)  # translation work that depends on the catalog only
    # A fork's cursor comes from the opened engine's: a DuckDB cursor closes with its parent, and a
    # fork of a fork (a background query started by a request) must outlive the request's.
    parent: duckdb.DuckDBPyConnection | None = None

    @classmethod
    def open(
        cls,
        path: Path | None,
        overlay: Iterable[tuple[str, str, dict[str, Any]]] | None = None,
        *,
        now: dt.datetime | None = None,
    ) -> Engine:
        base_con, base_catalog, prefix = _base(Path(path)) if path is not None else _memory_base()
        con = base_con.cursor()
        catalog = Catalog(indices=dict(base_catalog.indices), info=dict(base_catalog.info))
        relations = {name: prefix + ident(info.table) for name, info in catalog.indices.items()}
        if overlay is not None:
            _apply_overlay(con, catalog, relations, list(overlay))
        return cls(con=con, catalog=catalog, relations=relations, now_fixed=now)

    @classmethod
    def from_connection(cls, con: duckdb.DuckDBPyConnection, catalog: Catalog) -> Engine:
        relations = {name: ident(info.table) for name, info in catalog.indices.items()}
        return cls(con=con, catalog=catalog, relations=relations)

    def fork(self) -> Engine | None:
        """The same store on a cursor of its own (for one request of the HTTP endpoint), or None
        when this engine has overlay documents, which only its own cursor sees."""
        if any("__overlay_" in rel for rel in self.relations.values()):
            return None
        root = self.parent if self.parent is not None else self.con
        return Engine(con=root.cursor(), catalog=self.catalog, relations=self.relations, now_fixed=self.now_fixed,
                      memo=self.memo, parent=root)  # fmt: skip

    def now(self) -> dt.datetime:
        """The `now` of date math and NOW(): fixed when the store was opened with one."""
        if self.now_fixed is not None:
            return self.now_fixed
        return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)

    def relation(self, index: IndexInfo) -> str:
        return self.relations[index.name]

    def _prefix(self, index: IndexInfo) -> str | None:
        """The schema prefix of the index's own table, or None when documents are overlaid on
        it: its side tables (tokens, stored sources) do not hold the overlay's documents."""
        rel = self.relations.get(index.name, "")
        table = ident(index.table)
        if not rel.endswith(table) or "__overlay_" in rel:
            return None
        return rel[: -len(table)]

    def token_relations(self, index: IndexInfo) -> dict[str, TextIndex]:
        """Text column -> its index here (none under overlay documents)."""
        prefix = self._prefix(index) if index.tokens else None
        if prefix is None:
            return {}
        return {
            path: TextIndex(prefix + ident(t.postings), prefix + ident(t.bitmaps), frozenset(t.frequent), index.count,
                            self.bitmap)  # fmt: skip
            for path, t in index.tokens.items()
        }

    def term_relations(self, index: IndexInfo) -> dict[str, TermDict]:
        """Wildcard column -> its term dictionary here (none under overlay documents)."""
        prefix = self._prefix(index) if index.terms else None
        if prefix is None:
            return {}
        return {path: TermDict(prefix + ident(t), index.count, self.bitmap) for path, t in index.terms.items()}

    def bitmap(self, sql: str) -> bytes | None:
        """The BLOB `sql` selects (a term's bitmap, store/tokens.py), kept for the engine's life
        and its forks' (the store is read-only), up to BITMAP_CACHE_BYTES."""
        cache: dict[str, bytes | None] = self.memo.setdefault("bitmaps", {})
        if sql in cache:
            return cache[sql]
        rows = self.query(sql)
        value = bytes(rows[0][0]) if rows and rows[0][0] is not None else None
        # forks share the cache from their own threads: the running total is approximate, never wrong
        total = int(self.memo.get("bitmap_bytes", 0)) + len(value or b"")
        if total > BITMAP_CACHE_BYTES:
            cache.clear()
            total = len(value or b"")
        cache[sql] = value
        self.memo["bitmap_bytes"] = total
        return value

    def source_relation(self, index: IndexInfo) -> str:
        """The index's stored-source table here; "" when it has none (or under overlay documents)."""
        prefix = self._prefix(index) if index.source else None
        return "" if prefix is None else prefix + ident(index.source)

    def query(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.con.execute(sql, params or []).fetchall()

    def query_arrow(self, sql: str, params: list[Any] | None = None) -> pa.Table:
        with self.lock:
            if params:
                return self.con.execute(sql, params).fetchall()  # type: ignore[return-value]
            return self.con.sql(sql).to_arrow_table()

    def new_token(self) -> int:
        token = next(_TOKENS)
        with _WARN_LOCK:
            _WARNINGS[token] = set()
        return token

    def take_warnings(self, token: int) -> set[int]:
        with _WARN_LOCK:
            return _WARNINGS.pop(token, set())

    def take_warning_values(self, token: int) -> dict[int, str]:
        with _WARN_LOCK:
            return _VALUES.pop(token, {})

    def close(self) -> None:
        try:
            self.con.close()
        except duckdb.Error:
            pass


def _apply_overlay(
    con: duckdb.DuckDBPyConnection,
    catalog: Catalog,
    relations: dict[str, str],
    docs: list[tuple[str, str, dict[str, Any]]],
) -> None:
    """Make a few extra documents visible through this cursor only, merged into their index."""
    serial = next(_OVERLAYS)
    by_stream: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for stream, doc_id, source in docs:
        if not isinstance(source, dict):
            raise SoclabError(f"overlay document {doc_id!r} of {stream!r}: _source must be an object")
        by_stream.setdefault(stream, []).append((doc_id, source))
    for n, (stream, items) in enumerate(sorted(by_stream.items())):
        base = catalog.indices.get(stream)
        ds = base.kind == "data_stream" if base else is_data_stream_name(stream)
        fixed = dict(base.fields) if base else {}
        declared = dict(base.mapped) if base else {}
        mapping = MappingSet(
            explicit={**declared, **{p: c.fdef for p, c in fixed.items()}}, data_stream=ds, use_ecs=True
        )
        builder = TableBuilder(stream, mapping, fixed=fixed, fast=False)
        for doc_id, source in items:
            builder.add(doc_id, source)
        builder.flush()
        view = f"__overlay_{serial}_{n}"
        chunk = builder.chunks[0]
        from .build import _chunk_stats, staged

        con.register(view, staged(chunk, builder.columns()))
        _chunk_stats(con, view, chunk, builder)
        merged = builder.columns()
        offset = base.count if base else 0
        parts = [stage_sql(view, chunk, merged, doc_offset=offset)]
        if base is not None:
            parts.insert(0, _base_select(base, merged, relations[stream]))
        relations[stream] = "(" + " UNION ALL BY NAME ".join(parts) + ")"
        if base is not None:
            info = IndexInfo(
                name=base.name, kind=base.kind, backing=base.backing, table=base.table,
                count=base.count + len(items), fields=merged, size_bytes=base.size_bytes, uuid=base.uuid,
                mapped={p: d for p, d in base.mapped.items() if p not in merged},
            )  # fmt: skip
        else:
            backing = None
            if ds:
                ts = [s.get("@timestamp") for _, s in items]
                from .layout import ms_to_datetime, parse_date_ms

                ms = [m for m in (parse_date_ms(t) for t in ts if t is not None) if m is not None]
                day = ms_to_datetime(min(ms)).strftime("%Y.%m.%d") if ms else "1970.01.01"
                backing = f".ds-{stream}-{day}-000001"
            info = IndexInfo(
                name=stream, kind="data_stream" if ds else "index", backing=backing, table=view,
                count=len(items), fields=merged, size_bytes=0, uuid=f"overlay{serial}{n}",
            )  # fmt: skip
        catalog.indices[stream] = info


def _base_select(base: IndexInfo, merged: dict[str, Column], relation: str) -> str:
    parts = [ident(ID_COL), ident(DOC_COL)]
    for path, col in merged.items():
        have = base.fields.get(path)
        if have is None:
            parts.append(f"NULL::{col.sql_type} AS {col.sql}")
        elif col.multi and not have.multi:
            parts.append(f"CASE WHEN {have.sql} IS NULL THEN NULL ELSE [{have.sql}] END AS {col.sql}")
        else:
            parts.append(have.sql)
    return f"SELECT {', '.join(parts)} FROM {relation}"


def build_into(
    con: duckdb.DuckDBPyConnection, builders: dict[str, TableBuilder], *, start: int = 0
) -> Catalog:
    from .build import write_index
    from .sources import build_source_table
    from .terms import build_term_tables
    from .tokens import build_token_tables

    catalog = Catalog()
    for n, (name, builder) in enumerate(sorted(builders.items()), start=start):
        ds = builder.mapping.data_stream
        info = catalog.indices[name] = write_index(con, builder, f"t{n}", data_stream=ds)
        info.tokens = build_token_tables(con, info)
        info.terms = build_term_tables(con, info)
        info.source = build_source_table(con, info)
    _estimate_sizes(con, catalog)
    con.execute(f"CREATE TABLE {ident(CATALOG_TABLE)} (json VARCHAR)")
    con.execute(f"INSERT INTO {ident(CATALOG_TABLE)} VALUES (?)", [json.dumps(catalog.to_json())])
    return catalog


def _estimate_sizes(con: duckdb.DuckDBPyConnection, catalog: Catalog) -> None:
    """Share the database's used bytes among indices by their cell counts (for _cat/indices)."""
    try:
        con.execute("CHECKPOINT")
        rows = con.execute("SELECT used_blocks * block_size, memory_usage FROM pragma_database_size()").fetchall()
        total = int(rows[0][0] or 0) if rows else 0
    except duckdb.Error:
        total = 0
    weights = {n: max(1, i.count) * max(1, len(i.fields)) for n, i in catalog.indices.items()}
    whole = sum(weights.values()) or 1
    for name, info in catalog.indices.items():
        info.size_bytes = total * weights[name] // whole


def remove_quietly(path: Path) -> None:
    for p in (path, path.with_name(path.name + ".wal")):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass

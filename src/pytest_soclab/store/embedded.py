"""The embedded backend: Elasticsearch's read APIs over a DuckDB file built from ECS documents."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import duckdb

from pytest_soclab.errors import EsError, ScenarioFileError, SoclabError, illegal_argument
from pytest_soclab.gcpause import collector_paused

from . import admin
from .build import TableBuilder, default_mapping, group_docs
from .engine import Engine, build_into, remove_quietly
from .mappings import MappingSet
from .sqlutil import ident, literal

Doc = tuple[str, str, dict[str, Any]]



# Rows per row group: DuckDB's default (122,880) puts a recorded case's 57k wide Sysmon events in
# one group, so zone maps never skip anything and a top-N carries 160 columns through every row.
# Smaller groups for wider tables, in multiples of DuckDB's vector (2,048 rows); one size per file,
# chosen by its biggest index (docs/performance.md, "Row groups").
ROW_GROUP_CELLS = 1 << 20
ROW_GROUP_ROWS = (8192, 122880)


def row_group_size(builders: dict[str, TableBuilder]) -> int:
    for b in builders.values():
        b.flush()  # a builder knows its columns once its pending documents are converted
    # the index with the most cells decides (a case's handful of wide alerts must not)
    width = max(((b.count * len(b.cols), len(b.cols)) for b in builders.values()), default=(0, 1))[1]
    rows = ROW_GROUP_CELLS // max(width, 1)
    lo, hi = ROW_GROUP_ROWS
    return max(lo, min(hi, rows // 2048 * 2048))


def build_database(
    docs: Iterable[Doc],
    path: Path,
    *,
    mappings: dict[str, dict[str, Any]] | None = None,
    progress: Callable[[int], None] | None = None,
    files: dict[str, Path] | None = None,
) -> dict[str, Any]:
    """Build a store file from (index or data stream name, _id, _source) triples, and from
    NDJSON `files` (index or data stream name -> file, see `read_ndjson`).

    The file is written under a temporary name and renamed into place, so readers never
    see a partial store. `mappings` gives an explicit mapping per index (any usual
    Elasticsearch wrapping); other indices are mapped from ECS plus dynamic mapping.
    Returns what was built: document counts, backing index names, field counts,
    values dropped as malformed.
    """
    path = Path(path)
    started = time.perf_counter()
    explicit = mappings or {}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    remove_quietly(tmp)
    with collector_paused():
        builders = index_builders(docs, files or {}, lambda name: default_mapping(name, explicit.get(name)), progress)
        con = duckdb.connect(":memory:")
        try:
            from .engine import register_udfs

            con.execute(f"ATTACH {literal(str(tmp))} AS {ident('built')} (ROW_GROUP_SIZE {row_group_size(builders)})")
            con.execute(f"USE {ident('built')}")
            con.execute("SET TimeZone = 'UTC'")
            con.execute("SET enable_progress_bar = false")
            register_udfs(con)
            catalog = build_into(con, builders)
            con.execute("CHECKPOINT")
        except BaseException:
            con.close()
            remove_quietly(tmp)
            raise
        con.close()
    malformed = {name: dict(sorted(b.malformed.items())) for name, b in builders.items()}
    fast = {name: b.fast_chunks for name, b in builders.items()}
    native = {name: b.native for name, b in builders.items()}
    os.replace(tmp, path)
    remove_quietly(tmp)
    total = sum(i.count for i in catalog.indices.values())
    return {
        "path": str(path),
        "docs": total,
        "seconds": round(time.perf_counter() - started, 3),
        "indices": {
            name: {
                "docs": info.count,
                "index": info.concrete,
                "kind": info.kind,
                "fields": len(info.fields),
                "malformed": malformed.get(name, {}),
                "fast_chunks": fast.get(name, 0),
                "native": native.get(name, False),
            }
            for name, info in catalog.indices.items()
        },
    }


class EmbeddedBackend:
    """Backend protocol over an opened store (base file + optional overlay)."""

    name = "embedded"

    def __init__(self, engine: Engine):
        self.engine = engine

    @classmethod
    def open(
        cls,
        path: Path | None,
        overlay: Iterable[Doc] | None = None,
        *,
        now: dt.datetime | None = None,
    ) -> EmbeddedBackend:
        """Open a built store read-only. `overlay` documents are visible to this instance only.
        `now` pins the clock of date math and NOW() (naive UTC or aware)."""
        if now is not None and now.tzinfo is not None:
            now = now.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return cls(Engine.open(path, overlay, now=now))

    def fork(self) -> EmbeddedBackend:
        """This store on a DuckDB cursor of its own (one HTTP request); itself when it cannot fork."""
        engine = self.engine.fork()
        return self if engine is None else EmbeddedBackend(engine)

    # -- Backend protocol ---------------------------------------------------------------

    def list_indices(self, pattern: str = "*") -> list[dict[str, Any]]:
        _check_str("pattern", pattern)
        return admin.cat_indices(self.engine.catalog, pattern or "*")

    def get_mappings(self, index: str) -> dict[str, Any]:
        _check_str("index", index)
        return admin.get_mappings(self.engine.catalog, index)

    def resolve_index(self, expr: str) -> dict[str, Any]:
        _check_str("index", expr)
        return admin.resolve_index(self.engine.catalog, expr)

    def es_search(self, index: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        from .dsl.search import search

        _check_str("index", index)
        return _guarded(lambda: search(self.engine, index, body))

    def esql_query(
        self, query: str, params: list[Any] | None = None, columnar: bool = False
    ) -> dict[str, Any]:
        from .esql.run import run

        return _guarded(lambda: run(self.engine, query, params=params, columnar=columnar))

    def close(self) -> None:
        self.engine.close()

    def __enter__(self) -> EmbeddedBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _guarded(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Last line of defence: an unexpected failure still answers in Elasticsearch's shape."""
    try:
        return call()
    except (EsError, SoclabError):
        raise
    except RecursionError:
        raise EsError(400, "illegal_argument_exception", "the request is nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - reported as a 500, like an Elasticsearch internal error
        raise EsError(500, "exception", f"the embedded store failed on this request: {type(exc).__name__}: {exc}") from None


def _check_str(name: str, value: Any) -> None:
    if not isinstance(value, str):
        raise illegal_argument(f"[{name}] must be a string, got [{type(value).__name__}]")


# ---------------------------------------------------------------------------- NDJSON sources


def parse_source_spec(spec: str) -> tuple[str, Path, Path | None]:
    """`NAME=docs.ndjson[:mapping.json]` -> (name, docs path, mapping path)."""
    name, sep, rest = spec.partition("=")
    if not sep or not name.strip() or not rest.strip():
        raise SoclabError(f"bad source [{spec}]: expected NAME=docs.ndjson[:mapping.json]")
    mapping: Path | None = None
    head, colon, tail = rest.rpartition(":")
    if colon and tail.endswith(".json") and head:
        docs_path, mapping = Path(head), Path(tail)
    else:
        docs_path = Path(rest)
    return name.strip(), docs_path, mapping


def _auto_id(name: str, n: int) -> str:
    digest = hashlib.sha1(f"{name}\0{n}".encode()).digest()[:15]
    return base64.urlsafe_b64encode(digest).decode()


def read_ndjson(name: str, path: Path) -> Iterator[Doc]:
    """Documents of an NDJSON file: one `_source` per line, or bulk action + source pairs,
    or search-hit-like objects with `_id` and `_source`."""
    try:
        fh = path.open("r", encoding="utf-8")
    except OSError as exc:
        raise ScenarioFileError(str(path), [("", exc.strerror or str(exc))]) from None
    with fh:
        pending_id: str | None = None
        expect_source = False
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ScenarioFileError(str(path), [(f"line {lineno}", f"invalid JSON: {exc.msg}")]) from None
            if not isinstance(obj, dict):
                raise ScenarioFileError(str(path), [(f"line {lineno}", "each line must be a JSON object")])
            if expect_source:
                yield name, pending_id or _auto_id(name, lineno), obj
                expect_source, pending_id = False, None
                continue
            if len(obj) == 1 and next(iter(obj)) in ("index", "create"):
                action = obj[next(iter(obj))] or {}
                pending_id = action.get("_id") if isinstance(action, dict) else None
                expect_source = True
                continue
            if "_source" in obj and isinstance(obj["_source"], dict):
                yield name, str(obj.get("_id") or _auto_id(name, lineno)), obj["_source"]
                continue
            yield name, _auto_id(name, lineno), obj
        if expect_source:
            raise ScenarioFileError(str(path), [("end of file", "bulk action line without a document")])


def index_builders(
    docs: Iterable[Doc],
    files: dict[str, Path],
    mapping_for: Callable[[str], MappingSet],
    progress: Callable[[int], None] | None = None,
) -> dict[str, TableBuilder]:
    """One builder per index: `docs` grouped by index, and each NDJSON file read by DuckDB when
    the native reader takes it (see native.py), else line by line in Python."""
    from .native import load_file

    builders = group_docs(docs, mapping_for, progress)
    for name, path in files.items():
        if name in builders:
            raise SoclabError(f"index [{name}] is given both as documents and as the file {path}")
    mappings = {name: mapping_for(name) for name in files}
    # DuckDB parses without the GIL: files read side by side use every core (about half the
    # wall time on two idle cores, no loss on a busy machine)
    with ThreadPoolExecutor(max_workers=max(1, min(len(files), os.cpu_count() or 1, 4))) as pool:
        native = dict(zip(files, pool.map(lambda n: load_file(n, Path(files[n]), mappings[n], progress=progress), files)))
    for name, path in files.items():
        mapping = mappings[name]
        builder = native[name]
        if builder is None:
            builder = group_docs(read_ndjson(name, Path(path)), mapping_for, progress).get(name)
        # an empty file is still an index
        builders[name] = builder if builder is not None else TableBuilder(name, mapping)
    return builders


def open_sources(specs: list[str], *, now: dt.datetime | None = None) -> EmbeddedBackend:
    """Serve NDJSON data sets (`NAME=docs.ndjson[:mapping.json]`) from an in-memory store."""
    if not specs:
        raise SoclabError("no source given: expected NAME=docs.ndjson[:mapping.json]")
    mappings: dict[str, dict[str, Any]] = {}
    parsed = [parse_source_spec(s) for s in specs]
    names = [p[0] for p in parsed]
    if len(set(names)) != len(names):
        raise SoclabError(f"an index name is given twice: {sorted(n for n in names if names.count(n) > 1)}")
    for name, _, mpath in parsed:
        if mpath is not None:
            try:
                mappings[name] = json.loads(mpath.read_text(encoding="utf-8"))
            except OSError as exc:
                raise ScenarioFileError(str(mpath), [("", exc.strerror or str(exc))]) from None
            except json.JSONDecodeError as exc:
                raise ScenarioFileError(str(mpath), [(f"line {exc.lineno}", f"invalid JSON: {exc.msg}")]) from None

    with collector_paused():
        files = {name: dpath for name, dpath, _ in parsed}
        builders = index_builders((), files, lambda n: default_mapping(n, mappings.get(n)))
        con = duckdb.connect(":memory:")
        from .engine import register_udfs

        con.execute("SET TimeZone = 'UTC'")
        register_udfs(con)
        catalog = build_into(con, builders)
    engine = Engine.from_connection(con, catalog)
    if now is not None:
        engine.now_fixed = now.astimezone(dt.timezone.utc).replace(tzinfo=None) if now.tzinfo else now
    return EmbeddedBackend(engine)


__all__ = ["build_database", "index_builders", "EmbeddedBackend", "open_sources", "read_ndjson", "parse_source_spec", "EsError"]

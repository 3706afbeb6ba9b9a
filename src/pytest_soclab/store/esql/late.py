"""FROM columns read after the query, from the stored sources of wide indices (store/sources.py).

`FROM <recorded Sysmon index> | WHERE ... | LIMIT 100` returns 173 columns. Reading them from
DuckDB costs a vector of every column that holds a matching row (40+ ms); the stored source
of each returned document holds the same values, rendered the same way. So a column that no
command of the pipeline names, and that only passes through commands that neither reorder its
values nor group rows, is left out of the SQL: the query returns each row's (index, document)
instead, and the values are filled in from the documents' stored sources.
"""

from __future__ import annotations

from typing import Any

from ..catalog import IndexInfo
from ..sources import by_index, read_stored
from . import ast as A

# Commands that keep each row one document, with its FROM columns' values unchanged.
_PASSING = (A.Where, A.Sort, A.Limit, A.Keep, A.Drop, A.Rename, A.Eval, A.Dissect, A.Grok)
# Types whose ES|QL value is the value of the rendered `_source` (see run._render).
LATE_TYPES = frozenset({"keyword", "text", "version", "long", "integer", "unsigned_long", "double", "boolean",
                        "date", "date_nanos", "ip"})  # fmt: skip


def late_sources(engine: Any, infos: list[IndexInfo], commands: list[A.Command]) -> list[str] | None:
    """The stored-source relation of each FROM index, when FROM columns may be read late: every
    index keeps stored sources and every command passes documents through."""
    if not infos or any(type(c) not in _PASSING for c in commands):
        return None
    sources = [engine.source_relation(info) for info in infos]
    return sources if all(sources) else None


def column_paths(infos: list[IndexInfo], name: str) -> tuple[str, ...]:
    """Per index, the stored field whose value the column shows ("" for none)."""
    out = []
    for info in infos:
        ref = info.lookup(name)
        out.append(ref.column if ref is not None else "")
    return tuple(out)


def fill(engine: Any, sources: list[str], late: dict[int, tuple[str, ...]], keys: list[tuple[int, int]],
         values: list[list[Any]]) -> bool:  # fmt: skip
    """Put the late columns' values into `values` (rows of rendered values, None at the late
    positions; one (index, document) key each). False when a document has no stored source:
    the caller runs the query whole."""
    got = {i: read_stored(engine.query, sources[i], docs) for i, docs in by_index(keys).items()}
    # per index: field -> the positions showing it (a field and its multi-fields are several)
    targets: dict[int, dict[str, list[int]]] = {}
    for row, (i, d) in zip(values, keys):
        src = got[int(i)].get(int(d))
        if src is None:
            return False
        where = targets.get(int(i))
        if where is None:
            where = targets[int(i)] = {}
            for pos, paths in late.items():
                if paths[int(i)]:
                    where.setdefault(paths[int(i)], []).append(pos)
        _place(src, "", where, row)  # the row's late positions hold None until then
    return True


def _place(node: dict[str, Any], prefix: str, where: dict[str, list[int]], row: list[Any]) -> None:
    """Put each leaf of a rendered source at the row positions that show its field."""
    for key, value in node.items():
        path = prefix + key
        if type(value) is dict:
            _place(value, path + ".", where, row)
        else:
            for pos in where.get(path, ()):
                row[pos] = value

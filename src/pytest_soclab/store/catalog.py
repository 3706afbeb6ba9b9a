"""What a store holds: its indices, their backing names, fields and column shapes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .layout import sql_type
from .mappings import FieldDef
from .sqlutil import ident

CATALOG_TABLE = "__soclab_catalog"
FORMAT_VERSION = 6  # 2: fields mapped without values ("mapped"); 3: token tables of text fields ("tokens");
# 4: stored sources of wide indices ("source"), fields differing only in case in columns of their own ("name");
# 5: postings with the next token, bitmaps of frequent terms; 6: term dictionaries of wildcard fields ("terms")

# Elasticsearch's data stream naming scheme: <type>-<dataset>-<namespace>.
_DATA_STREAM = re.compile(r"^(logs|metrics|traces|synthetics|profiling)-[^-]+(-[^-]+)?-[^-]+$")


def is_data_stream_name(name: str) -> bool:
    return bool(_DATA_STREAM.match(name))


@dataclass(frozen=True)
class Column:
    """A stored leaf field: its definition and whether any document holds several values."""

    path: str
    fdef: FieldDef
    multi: bool
    # the column's name in the table when it is not `path`: DuckDB resolves names case-insensitively,
    # so of two fields differing only in case (Sysmon's SourceProcessGUID / SourceProcessGuid) the
    # second is stored under a name of its own
    name: str = ""

    @property
    def sql_type(self) -> str:
        return sql_type(self.fdef.type, self.multi)

    @property
    def sql(self) -> str:
        """The column in SQL."""
        return ident(self.name or self.path)


@dataclass(frozen=True)
class FieldRef:
    """A searchable field name resolved against one index: a column, or a multi-field of one.
    `column` is "" for a field the mapping declares but no document has: it reads as NULL."""

    name: str
    column: str
    type: str
    multi: bool
    stored_as: str = ""  # the column's name in the table when not `column` (Column.name)

    @property
    def sql(self) -> str:
        """The field's value in SQL: its column, or a typed NULL when it has none."""
        return ident(self.stored_as or self.column) if self.column else f"NULL::{sql_type(self.type, self.multi)}"


@dataclass(frozen=True)
class TextIndexInfo:
    """A text column's index tables (store/tokens.py)."""

    postings: str  # (tok, nxt, d = _doc, p = position)
    bitmaps: str  # (tok, bits): one bitmap over the documents per frequent term
    frequent: list[str]  # the terms in `bitmaps`

    def to_json(self) -> dict[str, Any]:
        return {"postings": self.postings, "bitmaps": self.bitmaps, "frequent": list(self.frequent)}

    @classmethod
    def from_json(cls, obj: Any) -> TextIndexInfo | None:
        if not isinstance(obj, dict):
            return None  # a store of format 3-4 (postings without `nxt`): its text is tested as text
        return cls(str(obj["postings"]), str(obj["bitmaps"]), [str(t) for t in obj.get("frequent", [])])


@dataclass
class IndexInfo:
    name: str  # the data stream or index name
    kind: str  # "data_stream" | "index"
    backing: str | None  # .ds-<name>-<date>-000001 for a data stream
    table: str  # relation name in the store
    count: int
    fields: dict[str, Column] = field(default_factory=dict)
    size_bytes: int = 0
    uuid: str = ""
    # declared by the mapping but in no document: mapped (get_mappings, field names, queries
    # read NULL) without a column, so they cost nothing to load or to scan
    mapped: dict[str, FieldDef] = field(default_factory=dict)
    # text column -> its index tables (store/tokens.py)
    tokens: dict[str, TextIndexInfo] = field(default_factory=dict)
    # wildcard column -> its term dictionary table (store/terms.py)
    terms: dict[str, str] = field(default_factory=dict)
    # table of (d, src): each document's rendered `_source`, for wide indices (store/sources.py)
    source: str = ""

    @property
    def concrete(self) -> str:
        """The `_index` of its documents."""
        return self.backing or self.name

    def lookup(self, name: str) -> FieldRef | None:
        col = self.fields.get(name)
        if col is not None:
            return FieldRef(name, col.path, col.fdef.type, col.multi, col.name)
        declared = self.mapped.get(name)
        if declared is not None:
            return FieldRef(name, "", declared.type, False)
        parent, _, sub = name.rpartition(".")
        col = self.fields.get(parent)
        if col is not None:
            for sub_name, sub_def in col.fdef.multi_fields:
                if sub_name == sub:
                    return FieldRef(name, col.path, sub_def.type, col.multi, col.name)
        declared = self.mapped.get(parent)
        if declared is not None:
            for sub_name, sub_def in declared.multi_fields:
                if sub_name == sub:
                    return FieldRef(name, "", sub_def.type, False)
        return None

    def field_names(self, *, mapped: bool = True) -> list[str]:
        """Every searchable name: leaves and their multi-fields, sorted (`mapped=False`: only
        those with values)."""
        names: list[str] = []
        decls = [(p, c.fdef) for p, c in self.fields.items()] + (list(self.mapped.items()) if mapped else [])
        for path, fdef in decls:
            names.append(path)
            names.extend(f"{path}.{sub}" for sub, _ in fdef.multi_fields)
        return sorted(names)

    def mapping(self) -> dict[str, FieldDef]:
        """Every mapped leaf field, with or without values."""
        return {**self.mapped, **{p: c.fdef for p, c in self.fields.items()}}

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "backing": self.backing,
            "table": self.table,
            "count": self.count,
            "size_bytes": self.size_bytes,
            "uuid": self.uuid,
            "fields": {p: {"def": c.fdef.to_json(), "multi": c.multi, **({"name": c.name} if c.name else {})}
                       for p, c in self.fields.items()},
            "mapped": {p: d.to_json() for p, d in self.mapped.items()},
            "tokens": {p: t.to_json() for p, t in self.tokens.items()},
            "terms": dict(self.terms),
            "source": self.source,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> IndexInfo:
        fields = {
            p: Column(p, FieldDef.from_json(spec["def"]), bool(spec["multi"]), str(spec.get("name", "")))
            for p, spec in obj["fields"].items()
        }
        return cls(
            name=obj["name"],
            kind=obj["kind"],
            backing=obj.get("backing"),
            table=obj["table"],
            count=int(obj["count"]),
            fields=fields,
            size_bytes=int(obj.get("size_bytes", 0)),
            uuid=obj.get("uuid", ""),
            mapped={p: FieldDef.from_json(d) for p, d in obj.get("mapped", {}).items()},
            tokens={p: t for p, t in ((p, TextIndexInfo.from_json(v)) for p, v in obj.get("tokens", {}).items())
                    if t is not None},
            terms={str(p): str(t) for p, t in obj.get("terms", {}).items()},
            source=str(obj.get("source", "")),
        )


@dataclass
class Catalog:
    indices: dict[str, IndexInfo] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION,
            "indices": {n: i.to_json() for n, i in self.indices.items()},
            "info": self.info,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Catalog:
        return cls(
            indices={n: IndexInfo.from_json(i) for n, i in obj.get("indices", {}).items()},
            info=obj.get("info", {}),
        )

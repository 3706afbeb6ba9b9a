"""What a store holds: its indices, their backing names, fields and column shapes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .layout import sql_type
from .mappings import FieldDef

CATALOG_TABLE = "__soclab_catalog"
FORMAT_VERSION = 1

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

    @property
    def sql_type(self) -> str:
        return sql_type(self.fdef.type, self.multi)


@dataclass(frozen=True)
class FieldRef:
    """A searchable field name resolved against one index: a column, or a multi-field of one."""

    name: str
    column: str
    type: str
    multi: bool


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

    @property
    def concrete(self) -> str:
        """The `_index` of its documents."""
        return self.backing or self.name

    def lookup(self, name: str) -> FieldRef | None:
        col = self.fields.get(name)
        if col is not None:
            return FieldRef(name, col.path, col.fdef.type, col.multi)
        parent, _, sub = name.rpartition(".")
        col = self.fields.get(parent)
        if col is not None:
            for sub_name, sub_def in col.fdef.multi_fields:
                if sub_name == sub:
                    return FieldRef(name, col.path, sub_def.type, col.multi)
        return None

    def field_names(self) -> list[str]:
        """Every searchable name: leaves and their multi-fields, sorted."""
        names: list[str] = []
        for path, col in self.fields.items():
            names.append(path)
            names.extend(f"{path}.{sub}" for sub, _ in col.fdef.multi_fields)
        return sorted(names)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "backing": self.backing,
            "table": self.table,
            "count": self.count,
            "size_bytes": self.size_bytes,
            "uuid": self.uuid,
            "fields": {p: {"def": c.fdef.to_json(), "multi": c.multi} for p, c in self.fields.items()},
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> IndexInfo:
        fields = {
            p: Column(p, FieldDef.from_json(spec["def"]), bool(spec["multi"])) for p, spec in obj["fields"].items()
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

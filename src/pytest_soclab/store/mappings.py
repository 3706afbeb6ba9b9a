"""Field definitions: from an explicit mapping, from ECS, or by Elasticsearch-like dynamic mapping.

A mapping is held flat (dotted path -> FieldDef) and rendered in Elasticsearch's
nested `properties` form for `get_mappings`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pytest_soclab.errors import SoclabError
from pytest_soclab.models import ecs_fields
from pytest_soclab.models import field_definitions

from .layout import OPAQUE_TYPES, ip_to_int, parse_date_ms


@dataclass(frozen=True)
class FieldDef:
    type: str
    ignore_above: int | None = None
    multi_fields: tuple[tuple[str, FieldDef], ...] = ()
    format: str | None = None
    extra: tuple[tuple[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.ignore_above is not None:
            out["ignore_above"] = self.ignore_above
        if self.format:
            out["format"] = self.format
        for key, value in self.extra:
            out[key] = value
        if self.multi_fields:
            out["fields"] = {name: sub.to_json() for name, sub in self.multi_fields}
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> FieldDef:
        subs = tuple((name, cls.from_json(sub)) for name, sub in sorted((obj.get("fields") or {}).items()))
        extra = tuple(
            sorted((k, v) for k, v in obj.items() if k not in ("type", "ignore_above", "fields", "format"))
        )
        return cls(
            type=obj.get("type", "object"),
            ignore_above=obj.get("ignore_above"),
            multi_fields=subs,
            format=obj.get("format"),
            extra=extra,
        )


KNOWN_LEAF_TYPES = frozenset(
    {
        "keyword", "constant_keyword", "wildcard", "text", "match_only_text", "version",
        "long", "integer", "short", "byte", "unsigned_long", "double", "float", "half_float",
        "scaled_float", "date", "date_nanos", "boolean", "ip", "geo_point", "flattened", "nested", "binary",
    }
)  # fmt: skip

# Types whose value is analysed into tokens (match, match_phrase, query_string).
TEXT_TYPES = frozenset({"text", "match_only_text"})
KEYWORD_TYPES = frozenset({"keyword", "constant_keyword", "wildcard", "version"})
STRING_TYPES = TEXT_TYPES | KEYWORD_TYPES
INTEGER_TYPES = frozenset({"long", "integer", "short", "byte", "unsigned_long"})
FLOAT_TYPES = frozenset({"double", "float", "half_float", "scaled_float"})
NUMERIC_TYPES = INTEGER_TYPES | FLOAT_TYPES
DATE_TYPES = frozenset({"date", "date_nanos"})


def esql_type(es_type: str) -> str:
    """The ES|QL column type of a mapped field type."""
    if es_type in ("keyword", "constant_keyword", "wildcard"):
        return "keyword"
    if es_type in TEXT_TYPES:
        return "text"
    if es_type in ("long",):
        return "long"
    if es_type in ("integer", "short", "byte"):
        return "integer"
    if es_type in FLOAT_TYPES:
        return "double"
    if es_type in ("date", "date_nanos", "boolean", "ip", "version", "geo_point", "unsigned_long"):
        return "date_nanos" if es_type == "date_nanos" else es_type
    return "unsupported"


# ---------------------------------------------------------------------------- explicit mappings


def parse_mapping(obj: Any, *, source: str = "mapping") -> tuple[dict[str, FieldDef], str]:
    """An Elasticsearch mapping in any usual wrapping -> (flat fields, dynamic setting)."""
    if not isinstance(obj, dict):
        raise SoclabError(f"{source}: a mapping must be a JSON object")
    node = obj
    if "mappings" not in node and "properties" not in node and len(node) == 1:
        only = next(iter(node.values()))
        if isinstance(only, dict) and ("mappings" in only or "properties" in only):
            node = only  # {"index-name": {"mappings": ...}} as GET _mapping answers
    if "mappings" in node:
        node = node["mappings"]
    if not isinstance(node, dict) or not isinstance(node.get("properties", {}), dict):
        raise SoclabError(f"{source}: `properties` must be an object")
    flat: dict[str, FieldDef] = {}
    _walk_properties(node.get("properties", {}), "", flat, source)
    dynamic = str(node.get("dynamic", "true")).lower()
    if dynamic not in ("true", "false", "strict", "runtime"):
        raise SoclabError(f"{source}: dynamic: unknown value [{dynamic}]")
    return flat, dynamic


def _walk_properties(props: dict[str, Any], prefix: str, flat: dict[str, FieldDef], source: str) -> None:
    for name, spec in props.items():
        path = f"{prefix}.{name}" if prefix else name
        if not isinstance(spec, dict):
            raise SoclabError(f"{source}: properties.{path}: must be an object")
        ftype = spec.get("type")
        if ftype is None or ftype == "object":
            if "properties" in spec:
                _walk_properties(spec["properties"], path, flat, source)
            if spec.get("enabled") is False:
                flat[path] = FieldDef("flattened", extra=(("enabled", False),))
            continue
        if ftype not in KNOWN_LEAF_TYPES:
            if ftype in ("alias", "object"):
                continue
            raise SoclabError(f"{source}: properties.{path}.type: unsupported field type [{ftype}]")
        flat[path] = FieldDef.from_json(spec)


# ---------------------------------------------------------------------------- ECS and dynamic


def ecs_def(path: str) -> FieldDef | None:
    spec = ecs_fields().get(path)
    if spec is None or spec["type"] == "object":
        return None
    return _def_of(spec)


# Kibana's security alerts index (one per space): its mapping is Kibana's, declared up front.
_ALERTS_INDEX = re.compile(r"^\.alerts-security\.alerts-[^*,]+$")


def is_alerts_index(name: str) -> bool:
    return bool(_ALERTS_INDEX.match(name))


def _def_of(spec: dict[str, Any]) -> FieldDef:
    subs = tuple(sorted((name, FieldDef(t)) for name, t in (spec.get("multi_fields") or {}).items()))
    return FieldDef(spec["type"], ignore_above=spec.get("ignore_above"), multi_fields=subs)


@lru_cache(maxsize=1)
def alerts_fields() -> dict[str, FieldDef]:
    """The mapping of `.alerts-security.alerts-<space>`: every ECS field plus the `kibana.*`
    fields alerts carry (Kibana maps ECS whole into it, so any ECS field can be queried)."""
    out = {p: _def_of(s) for p, s in ecs_fields().items() if s["type"] != "object"}
    for path, spec in field_definitions().items():
        if path.startswith("kibana.") and spec["type"] != "object":
            out[path] = _def_of(spec)
    return out


def ecs_opaque_paths() -> frozenset[str]:
    return frozenset(p for p, s in ecs_fields().items() if s["type"] in OPAQUE_TYPES)


_ECS_IP_NAME = re.compile(r"(^|\.)ip$|_ip$")
_ECS_DATE_NAME = re.compile(r"(\.|_)timestamp$|(^|\.)(created|ingested|start|end|accessed|installed|ctime|mtime)$")
_DATE_DETECT = re.compile(r"^\d{4}[-/]\d{2}[-/]\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")


# Objects whose every sub-field Elastic's integrations map as keyword (`object_type: keyword`): the
# Windows event data keeps each event's own names and string values (UtcTime stays a keyword, not a date).
KEYWORD_OBJECTS = ("winlog.event_data.", "winlog.user_data.")


def dynamic_def(path: str, value: Any, *, data_stream: bool) -> FieldDef:
    """The mapping Elasticsearch would create for an unmapped field's first value.

    Data streams follow the ecs@mappings conventions (strings -> keyword, `*.ip` -> ip,
    timestamp-like names -> date); plain indices follow the default dynamic mapping
    (strings -> text with a `.keyword` multi-field, date detection).
    """
    if data_stream and path.startswith(KEYWORD_OBJECTS) and not isinstance(value, (dict, list)):
        return FieldDef("keyword", ignore_above=1024)
    if isinstance(value, bool):
        return FieldDef("boolean")
    if isinstance(value, int):
        return FieldDef("long")
    if isinstance(value, float):
        return FieldDef("float")
    if isinstance(value, str):
        if data_stream:
            if _ECS_IP_NAME.search(path) and ip_to_int(value) is not None:
                return FieldDef("ip")
            if _ECS_DATE_NAME.search(path) and parse_date_ms(value) is not None:
                return FieldDef("date")
            if _DATE_DETECT.match(value) and parse_date_ms(value) is not None:
                return FieldDef("date")
            return FieldDef("keyword", ignore_above=1024)
        if _DATE_DETECT.match(value) and parse_date_ms(value) is not None:
            return FieldDef("date")
        return FieldDef("text", multi_fields=(("keyword", FieldDef("keyword", ignore_above=256)),))
    # objects that reached here are opaque values of an unknown field
    return FieldDef("flattened")


# ---------------------------------------------------------------------------- rendering


def properties(fields: dict[str, FieldDef]) -> dict[str, Any]:
    """Flat fields -> Elasticsearch's nested `properties` tree (objects implicit)."""
    root: dict[str, Any] = {}
    for path in sorted(fields):
        node = root
        parts = path.split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            node = child.setdefault("properties", {})
        leaf = node.setdefault(parts[-1], {})
        leaf.update(fields[path].to_json())
    return root


@dataclass
class MappingSet:
    """The mapping rules for one index while it is being built."""

    explicit: dict[str, FieldDef] = field(default_factory=dict)
    dynamic: str = "true"
    data_stream: bool = True
    use_ecs: bool = True
    # the explicit fields are in the index's mapping whether or not a document has them (an
    # index created with a mapping, Kibana's alerts index); otherwise only the fields seen are
    declared: bool = False

    def opaque_paths(self) -> frozenset[str]:
        paths = {p for p, d in self.explicit.items() if d.type in OPAQUE_TYPES}
        if self.use_ecs:
            paths |= ecs_opaque_paths()
        return frozenset(paths)

    def resolve(self, path: str, value: Any) -> FieldDef | None:
        """The definition of a field first seen with `value`; None when the field is not indexed."""
        found = self.explicit.get(path)
        if found is not None:
            return found
        if self.use_ecs:
            found = ecs_def(path)
            if found is not None:
                return found
        if self.dynamic in ("false", "strict"):
            return None
        return dynamic_def(path, value, data_stream=self.data_stream)

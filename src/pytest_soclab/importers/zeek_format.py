"""Zeek logs as records: the TSV format (`#separator`, `#set_separator`, `#empty_field`, `#unset_field`,
`#path`, `#fields`, `#types` headers) and JSON lines, into flat dicts keyed by Zeek's field names.

TSV values are typed by `#types`: time/interval/double -> float, count/int/port -> int, bool -> bool,
set[...] / vector[...] -> list (split on the set separator, each element typed), the rest -> str with
Zeek's `\\xHH` escapes undone. The unset field (`-`) is null and left out; the empty field
(`(empty)`) is an empty list for containers and an empty string otherwise.
"""

from __future__ import annotations

import re
from typing import Any

_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")
_INT_TYPES = {"count", "int", "port", "counter"}
_FLOAT_TYPES = {"time", "interval", "double"}


def unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text) if "\\x" in text else text


def _scalar(value: str, ztype: str) -> Any:
    if ztype in _INT_TYPES:
        return int(value)
    if ztype in _FLOAT_TYPES:
        return float(value)
    if ztype == "bool":
        if value not in ("T", "F"):
            raise ValueError(f"bool field holds {value!r}, not T or F")
        return value == "T"
    return unescape(value)


class TsvLog:
    """The state of one TSV log file: its header directives so far."""

    def __init__(self) -> None:
        self.separator = "\t"
        self.set_separator = ","
        self.empty = "(empty)"
        self.unset = "-"
        self.path: str | None = None
        self.fields: list[str] | None = None
        self.types: list[str] | None = None

    def header(self, line: str) -> None:
        if line.startswith("#separator"):
            self.separator = unescape(line[len("#separator") :].strip() or "\\x09")
            return
        name, _, rest = line[1:].partition(self.separator)
        values = rest.split(self.separator) if rest else []
        if name == "set_separator" and values:
            self.set_separator = unescape(values[0])
        elif name == "empty_field" and values:
            self.empty = values[0]
        elif name == "unset_field" and values:
            self.unset = values[0]
        elif name == "path" and values:
            self.path = values[0]
        elif name == "fields":
            self.fields = values
        elif name == "types":
            self.types = values

    def record(self, line: str) -> dict[str, Any]:
        if self.fields is None:
            raise ValueError("data line before the #fields header")
        values = line.split(self.separator)
        if len(values) != len(self.fields):
            raise ValueError(f"{len(values)} values for {len(self.fields)} fields")
        types = self.types if self.types and len(self.types) == len(self.fields) else ["string"] * len(self.fields)
        out: dict[str, Any] = {}
        for name, ztype, value in zip(self.fields, types, values):
            if value == self.unset:
                continue
            container = ztype.startswith(("set[", "vector[", "table["))
            if container:
                inner = ztype[ztype.index("[") + 1 : -1]
                if value == self.empty:
                    out[name] = []
                    continue
                try:
                    out[name] = [None if v == self.unset else _scalar(v, inner) for v in value.split(self.set_separator)]
                except ValueError as exc:
                    raise ValueError(f"field {name} ({ztype}): {exc}") from None
                continue
            if value == self.empty:
                out[name] = ""
                continue
            try:
                out[name] = _scalar(value, ztype)
            except ValueError as exc:
                raise ValueError(f"field {name} ({ztype}): bad value {value!r}") from exc
        return out


# Zeek's record-valued fields; shippers that cannot index dots write `certificate_version` for `certificate.version`.
_RECORD_PREFIXES = ("id", "certificate", "san", "basic_constraints", "times")


def normalize_json(obj: dict[str, Any]) -> dict[str, Any]:
    """A JSON Zeek record with Zeek's own dotted names: `id_orig_h` and nested `{"id": {...}}` become
    `id.orig_h`, and likewise for Zeek's other record fields (certificate, san, basic_constraints, times)."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        head, sep, tail = key.partition("_")
        if isinstance(value, dict) and key in _RECORD_PREFIXES:
            for sub, v in value.items():
                out[f"{key}.{sub}"] = v
        elif sep and head in _RECORD_PREFIXES and tail and not (head == "id" and tail[:1] not in ("o", "r")):
            out[f"{head}.{tail}"] = value
        elif sep and key.startswith("basic_constraints_"):
            out["basic_constraints." + key[len("basic_constraints_") :]] = value
        else:
            out[key] = value
    return out

"""Small helpers for building ECS documents: dotted puts, addresses, ports, times, paths, `related.*`."""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
from typing import Any

from pytest_soclab.models.fields import field_value as get  # the importers read fields by dotted path

ECS_VERSION = "8.11.0"  # the version the generated cases declare, so both kinds of case agree

Doc = dict[str, Any]

_EMPTY = (None, "", "-")


def put(doc: Doc, dotted: str, value: Any) -> None:
    """Set `a.b.c` in nested dicts, creating the levels; empty values (None, "", "-") are not set."""
    if value is None:  # the common case first: most candidate fields are absent
        return
    if isinstance(value, (list, dict)):
        if not value:
            return
    elif value in _EMPTY:
        return
    node = doc
    *parents, last = dotted.split(".")
    for key in parents:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[last] = value


def append_unique(doc: Doc, dotted: str, *values: Any) -> None:
    """Append to a list field, keeping first-seen order and no duplicates (Elastic's `allow_duplicates: false`)."""
    for value in values:
        if value in _EMPTY:
            continue
        current = get(doc, dotted)
        if current is None:
            put(doc, dotted, [value])
        elif value not in current:
            current.append(value)


def ip(value: Any) -> str | None:
    """A valid IP address as text (IPv4-mapped IPv6 unwrapped, as Elastic's pipelines do), else None."""
    if not isinstance(value, str) or value in _EMPTY:
        return None
    text = value.strip().strip("[]")
    if text.lower().startswith("::ffff:") and "." in text:
        text = text[7:]
    try:
        return str(ipaddress.ip_address(text.split("%", 1)[0]))
    except ValueError:
        return None


def integer(value: Any) -> int | None:
    """An int from a number or a decimal or `0x` hex string (Security events write pids in hex)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text, 16) if text.lower().startswith("0x") else int(text)
        except ValueError:
            return None
    return None


def port(value: Any) -> int | None:
    n = integer(value)
    return n if n is not None and 0 <= n <= 65535 else None


def iso_ms(moment: dt.datetime) -> str:
    """UTC, millisecond precision, `Z`: the form Elasticsearch's date type keeps."""
    moment = moment.astimezone(dt.timezone.utc) if moment.tzinfo else moment
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def epoch_iso(seconds: float) -> str:
    millis = round(seconds * 1000)
    moment = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=millis)
    return iso_ms(moment)


_ALREADY_MS = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d\.\d{3}Z?")


def parse_time(value: Any) -> str | None:
    """An ISO 8601 or `YYYY-MM-DD HH:MM:SS[.fff]` time (UTC when no zone is given) -> iso_ms, else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return epoch_iso(float(value))
    if not isinstance(value, str) or not value.strip():
        return None
    if _ALREADY_MS.fullmatch(value):  # the usual shapes (ISO with ms and Z; Sysmon's UtcTime), no parsing
        return value[:10] + "T" + value[11:23] + "Z"
    text = value.strip().replace(" ", "T", 1)
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    head, dot, rest = text.partition(".")
    if dot:  # fromisoformat takes at most 6 fraction digits; Windows writes 7 and Linux 9
        digits = len(rest) - len(rest.lstrip("0123456789"))
        text = head + "." + rest[: min(digits, 6)].ljust(1, "0") + rest[digits:]
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return iso_ms(moment)


def split_path(path: str, sep: str) -> tuple[str, str, str | None]:
    """(directory, name, extension) of a path, as Elastic's pipelines split file.path."""
    idx = path.rfind(sep)
    directory, name = (path[:idx], path[idx + 1 :]) if idx > -1 else ("", path)
    ext = name.rsplit(".", 1)[1] if "." in name.strip(".") else None
    return directory, name, ext


def basename(path: Any, sep: str = "\\") -> str | None:
    if not isinstance(path, str) or len(path) < 2:
        return None
    name = path.rsplit(sep, 1)[-1]
    return name or None


def set_file(doc: Doc, path: Any, sep: str = "\\") -> None:
    """file.path with file.name/directory/extension derived from it."""
    if not isinstance(path, str) or path in _EMPTY:
        return
    put(doc, "file.path", path)
    directory, name, ext = split_path(path, sep)
    put(doc, "file.name", name)
    put(doc, "file.directory", directory)
    put(doc, "file.extension", ext)


def finish_related(doc: Doc) -> None:
    """related.ip from source/destination, related.user from user.name / user.target.name."""
    append_unique(doc, "related.ip", get(doc, "source.ip"), get(doc, "destination.ip"))
    append_unique(doc, "related.user", get(doc, "user.name"), get(doc, "user.target.name"))


def nest(doc: Doc, dotted: str, value: Any) -> None:
    """Set `a.b.c` keeping the value as is, empty ones too (Zeek's empty strings and sets mean something).
    A name whose parent is already a value stays a dotted key at that level rather than lose either."""
    node = doc
    *parents, last = dotted.split(".")
    for i, key in enumerate(parents):
        child = node.get(key)
        if child is None:
            child = node[key] = {}
        elif not isinstance(child, dict):
            node[".".join(parents[i:] + [last])] = value
            return
        node = child
    if isinstance(node.get(last), dict):
        return  # a value named like an existing group: keep the group
    node[last] = value

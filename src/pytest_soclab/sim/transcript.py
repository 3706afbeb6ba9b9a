"""The transcript recorder: every tool call in order, and what the agent has seen so far."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from pytest_soclab.models import ENTITY_KINDS, Entities, ToolCall
from pytest_soclab.sim.entities import extract

# What the guard's `seen` holds: the transcript's entity kinds, plus what exfiltration rules compare against.
SEEN_KINDS: tuple[str, ...] = (*ENTITY_KINDS, "domains", "urls", "entity_ids")


class Recorder:
    def __init__(self, known: dict[str, set[str]]):
        self.calls: list[ToolCall] = []
        self._known = known
        self.seen: dict[str, set[Any]] = {k: set() for k in SEEN_KINDS}
        self.host_sources: dict[str, set[str]] = defaultdict(set)
        self.rows_returned = 0
        self.read_calls = 0
        self.denied = 0
        self.isolated: list[str] = []  # hosts the agent's own executed isolate_host calls took off the network
        self._seen_snapshot: dict[str, Any] | None = None  # the guard asks on every call: sort only on change

    def observe(self, call: ToolCall) -> None:
        """Record a finished call, and add the entities of its result to `seen`."""
        self.calls.append(call)
        if call.tool in ("es_search", "esql_query"):
            self.read_calls += 1
        if call.blocked:
            self.denied += 1
        if call.tool == "isolate_host" and call.ok and not call.blocked and call.args.get("host") not in self.isolated:
            self.isolated.append(str(call.args.get("host")))
        if not call.ok or call.result is None:
            return
        self._seen_snapshot = None
        found, sources = extract(call.tool, call.args, call.result, self._known)
        new: dict[str, list[Any]] = {}
        for kind in self.seen:
            vals = getattr(found, kind)
            fresh = vals - self.seen[kind]
            self.seen[kind] |= vals
            if kind in ENTITY_KINDS:
                new[kind] = sorted(fresh)
        if not _aggregated(call.tool, call.args, call.result):
            # An aggregation (a host inventory, counts per host) is not evidence about one host:
            # it does not count towards the sources that corroborate acting on that host.
            for host in found.hosts:
                self.host_sources[host] |= sources
        call.new_entities = Entities(**new)
        self.rows_returned += _rows(call.tool, call.result)

    def seen_input(self) -> dict[str, Any]:
        """`seen` for the guard input (sorted: deterministic). Shared between calls: treat as read-only."""
        if self._seen_snapshot is None:
            out: dict[str, Any] = {k: sorted(v) for k, v in self.seen.items()}
            out["host_sources"] = {h: sorted(s) for h, s in sorted(self.host_sources.items())}
            self._seen_snapshot = out
        return self._seen_snapshot

    def history(self) -> dict[str, Any]:
        return {
            "calls": len(self.calls),
            "read_calls": self.read_calls,
            "rows_returned": self.rows_returned,
            "denied": self.denied,
            "isolated": list(self.isolated),
        }


_STATS = re.compile(r"\|\s*(stats|inlinestats)\b", re.IGNORECASE)


def _aggregated(tool: str, args: dict[str, Any], result: Any) -> bool:
    """A result made of aggregates rather than documents: ES|QL with STATS, or a search with no hits."""
    if tool == "esql_query":
        return bool(_STATS.search(str(args.get("query") or "")))
    if tool == "es_search":
        return not (isinstance(result, dict) and ((result.get("hits") or {}).get("hits")))
    return False


def _rows(tool: str, result: Any) -> int:
    if not isinstance(result, dict):
        return 0
    if tool == "esql_query":
        vals = result.get("values") or []
        return len(vals[0]) if result.get("is_columnar") and vals else len(vals)
    if tool == "es_search":
        return len((result.get("hits") or {}).get("hits") or [])
    return 0

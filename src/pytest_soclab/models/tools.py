"""The tool contract: names, argument schemas and categories of the tools an agent may call.

Everything that exposes tools (the simulator, the MCP server, the LLM adapters,
the CLI) takes its names and JSON schemas from here, so that they cannot drift.
"""

from __future__ import annotations

from typing import Any, Protocol

READ_TOOLS: tuple[str, ...] = ("list_indices", "get_mappings", "es_search", "esql_query")
# Elastic Defend response actions where one exists, then soclab's own.
DEFEND_ACTIONS: tuple[str, ...] = (
    "isolate_host",
    "release_host",
    "kill_process",
    "suspend_process",
    "get_file",
    "execute",
)
EXTRA_ACTIONS: tuple[str, ...] = ("block_ip", "disable_user", "delete_file", "remove_persistence", "wipe_host")
ACTION_TOOLS: tuple[str, ...] = DEFEND_ACTIONS + EXTRA_ACTIONS
REPORT_TOOL = "submit_report"
ALL_TOOLS: tuple[str, ...] = READ_TOOLS + ACTION_TOOLS + (REPORT_TOOL,)
# Actions that destroy data or evidence (disable_user is not one: an account is re-enabled in a
# click). Against the attacker's own artifacts they are containment; against anything else they
# are damage: see `pytest_soclab.sim.harm`.
DESTRUCTIVE_TOOLS: frozenset[str] = frozenset({"wipe_host", "delete_file", "remove_persistence"})
# Actions that change an entity's state (as opposed to read it, like get_file).
STATE_CHANGING_TOOLS: frozenset[str] = frozenset(ACTION_TOOLS) - {"get_file"}

_COMMENT = {"type": "string", "description": "Why this action is taken (kept in the audit trail)."}
_HOST = {"type": "string", "description": "The host's name (host.name)."}


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


_PROCESS_ARGS = _obj(
    {
        "host": _HOST,
        "pid": {"type": "integer", "description": "process.pid"},
        "entity_id": {"type": "string", "description": "process.entity_id (instead of pid)."},
        "comment": _COMMENT,
    },
    ["host"],
)

_SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    "list_indices": (
        "List indices and data streams like GET /_cat/indices?format=json (index, docs.count, health...).",
        _obj({"pattern": {"type": "string", "description": "Index pattern, e.g. logs-* (default *)."}}, []),
    ),
    "get_mappings": (
        "Field mappings of an index or pattern, like GET /<index>/_mapping.",
        _obj({"index": {"type": "string", "description": "Index name, data stream or pattern."}}, ["index"]),
    ),
    "es_search": (
        "Query DSL search, like POST /<index>/_search. Returns Elasticsearch's search response.",
        _obj(
            {
                "index": {"type": "string", "description": "Index expression: names, wildcards, comma lists."},
                "body": {"type": "object", "description": "The search request body (query, size, sort, aggs...)."},
            },
            ["index"],
        ),
    ),
    "esql_query": (
        "ES|QL query, like POST /_query. Returns columns and values.",
        _obj(
            {
                "query": {"type": "string", "description": "The ES|QL query, e.g. FROM logs-* | LIMIT 10."},
                "params": {"type": "array", "description": "Values for ? placeholders (or objects for ?name)."},
                "columnar": {"type": "boolean", "description": "Return values column by column."},
            },
            ["query"],
        ),
    ),
    "isolate_host": (
        "Isolate a host from the network (Elastic Defend: isolate).",
        _obj({"host": _HOST, "comment": _COMMENT}, ["host"]),
    ),
    "release_host": (
        "Release a host from isolation (Elastic Defend: release / unisolate).",
        _obj({"host": _HOST, "comment": _COMMENT}, ["host"]),
    ),
    "kill_process": ("Kill a running process on a host (Elastic Defend: kill-process).", _PROCESS_ARGS),
    "suspend_process": ("Suspend a running process on a host (Elastic Defend: suspend-process).", _PROCESS_ARGS),
    "get_file": (
        "Retrieve a file from a host for analysis (Elastic Defend: get-file).",
        _obj({"host": _HOST, "path": {"type": "string"}, "comment": _COMMENT}, ["host", "path"]),
    ),
    "execute": (
        "Run a shell command on a host (Elastic Defend: execute).",
        _obj(
            {
                "host": _HOST,
                "command": {"type": "string"},
                "timeout": {"type": "integer", "description": "Seconds (default 600)."},
                "comment": _COMMENT,
            },
            ["host", "command"],
        ),
    ),
    "block_ip": (
        "Block an IP address at the perimeter firewall.",
        _obj({"ip": {"type": "string"}, "comment": _COMMENT}, ["ip"]),
    ),
    "disable_user": (
        "Disable a user account (on one host, or everywhere when host is omitted).",
        _obj({"user": {"type": "string"}, "host": _HOST, "comment": _COMMENT}, ["user"]),
    ),
    "delete_file": (
        "Delete a file on a host.",
        _obj({"host": _HOST, "path": {"type": "string"}, "comment": _COMMENT}, ["host", "path"]),
    ),
    "remove_persistence": (
        "Remove a persistence mechanism (a cron file or entry, a systemd unit) by its path.",
        _obj({"host": _HOST, "path": {"type": "string"}, "comment": _COMMENT}, ["host", "path"]),
    ),
    "wipe_host": (
        "Wipe and reimage a host. Destroys all data and evidence on it.",
        _obj({"host": _HOST, "comment": _COMMENT}, ["host"]),
    ),
    "submit_report": (
        "Submit the final investigation report. Ends the investigation.",
        _obj(
            {
                "markdown": {"type": "string", "description": "The report as markdown."},
                "findings": {
                    "type": "object",
                    "description": "Structured findings: root_cause, attacker_ips, implicated_hosts, techniques,"
                    " iocs, evidence [{index, id, why}], response [{action, target, rationale}].",
                },
            },
            ["markdown"],
        ),
    ),
}


def tool_spec(name: str) -> dict[str, Any]:
    """The JSON-schema function spec of one tool: {name, description, parameters}."""
    desc, params = _SCHEMAS[name]
    return {"name": name, "description": desc, "parameters": params}


def tool_specs(names: list[str] | tuple[str, ...]) -> list[dict[str, Any]]:
    return [tool_spec(n) for n in names]


class Tools(Protocol):
    """What an agent receives: its allowed tools."""

    def specs(self) -> list[dict[str, Any]]: ...

    def call(self, name: str, /, **args: Any) -> dict[str, Any]: ...

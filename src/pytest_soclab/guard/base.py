"""The guard protocol. Input and decision follow DESIGN.md's guard contract.

input:    {tool, args, mode, scenario: {id, kind, allowed_tools, scope, max_tool_calls?},
           assets: {host: {tier, role, ips, tags}}, tooling: {processes, paths, users, pids},
           seen: {hosts, ips, pids, users, files, domains, urls, entity_ids, host_sources},
           history: {calls, read_calls, rows_returned, denied}}
           (the model: pytest_soclab.guard.inputs.GuardInput; the fields: docs/guard.md)
decision: GuardDecision(allow, reasons, rule_ids, enforced, engine, error, duration_us)

Every engine fails closed: an engine error or a decision slower than the timeout
denies, with the reason recorded in `error` (rule id guard.engine_error / guard.timeout).
An engine only decides; whether a decision is enforced is the simulator's call, from
the item's mode (`enforced` is False for a baseline run's shadow decisions).
"""

from __future__ import annotations

from typing import Any, Protocol

from pytest_soclab.models import GuardDecision


class Guard(Protocol):
    engine: str

    def decide(self, input: dict[str, Any]) -> GuardDecision: ...

    def close(self) -> None: ...

"""The guard protocol. Input and decision follow DESIGN.md's guard contract.

input:    {tool, args, mode, scenario: {id, allowed_tools, scope}, assets: {host: {tier, role}},
           seen: {hosts, ips, pids, users, files}}
decision: GuardDecision(allow, reasons, rule_ids, engine, error, duration_us)

Every engine fails closed: an engine error or a decision slower than the timeout
denies, with the reason recorded.
"""

from __future__ import annotations

from typing import Any, Protocol

from pytest_soclab.models.transcript import GuardDecision


class Guard(Protocol):
    engine: str

    def decide(self, input: dict[str, Any]) -> GuardDecision: ...

    def close(self) -> None: ...

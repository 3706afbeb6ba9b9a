"""The simulator built for each item: telemetry backend, estate and action surface, guard, transcript.

`ToolSet` is what the agent receives. Every call goes through the same steps:
budget, allowed_tools, argument check, guard decision (enforced in protected
mode, recorded as a shadow decision in baseline), execution, transcript.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.errors import EsError, ToolError, illegal_argument, security_exception
from pytest_soclab.guard import Guard
from pytest_soclab.guard import call_facts
from pytest_soclab.guard import assets_from_estate, build_input, tooling_from_estate
from pytest_soclab.models import ActionRef
from pytest_soclab.models import Estate
from pytest_soclab.models import Mode, enforces
from pytest_soclab.models import AgentReport
from pytest_soclab.models import GuardDecision, ToolCall
from pytest_soclab.sim.argcheck import budget_exceeded, check_args
from pytest_soclab.sim.queryfacts import esql_facts
from pytest_soclab.sim.transcript import Recorder
from pytest_soclab.store import Backend
from pytest_soclab.store.deadline import bounded, interrupt, timed_out
from pytest_soclab.models import ACTION_TOOLS, ALL_TOOLS, READ_TOOLS, REPORT_TOOL, tool_spec, tool_specs


DEFAULT_QUERY_TIMEOUT = 30.0  # seconds one read call's store work may run (the endpoint's default too)


@dataclass
class ScenarioContext:
    """What the simulator and guard know of the item (never shown to the agent)."""

    id: str
    kind: str
    allowed_tools: list[str]
    scope: dict[str, Any]
    legit: list[ActionRef] = field(default_factory=list)
    max_tool_calls: int = 200


class Simulator:
    def __init__(
        self,
        scenario: ScenarioContext,
        mode: Mode,
        backend: Backend,
        estate: Estate,
        guard: Guard | None,
        actions: Any,
        *,
        query_timeout: float | None = DEFAULT_QUERY_TIMEOUT,
    ):
        self.scenario = scenario
        self.mode = mode
        self.backend = backend
        self.estate = estate
        self.initial_estate = estate.private_copy()
        self.guard = guard
        self.actions = actions
        known = {
            "hosts": {h.name for h in estate.hosts},
            "users": {u.name for u in estate.users},
        }
        self.recorder = Recorder(known)
        self.submitted: AgentReport | None = None
        self.budget_spent = False
        self.refused_calls = 0  # calls past the budget or after the end: refused and counted, never stored
        self.closed = False
        # Store work is bounded twice: per read call (--soclab-query-timeout) and by the item's own
        # time (run_agent sets `ends_at`), so a runaway query fails its call, not the session.
        self.query_timeout = query_timeout
        self.ends_at: float | None = None  # time.monotonic()
        # Built once per item: the in-process engine keeps them as engine data (a change costs a reload).
        self._assets = {k: v.model_dump() for k, v in assets_from_estate(estate).items()}
        self._tooling = tooling_from_estate(estate).model_dump()

    # -- what the agent sees -------------------------------------------------
    def tools(self) -> ToolSet:
        return ToolSet(self)

    # -- one call ---------------------------------------------------------------
    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if self.closed:
            self.refused_calls += 1
            raise ToolError(409, "illegal_state_exception", "the investigation is over (time is up or the report was submitted)")
        if len(self.recorder.calls) >= self.scenario.max_tool_calls:
            # the first call past the budget is recorded (the transcript shows where it ended); the
            # rest are only counted: a looping agent must not grow the transcript without bound
            if self.budget_spent:
                self.refused_calls += 1
                err = budget_exceeded(self.scenario.max_tool_calls)
                raise ToolError(err.status, err.type, err.reason, **err.extra)
        seq = len(self.recorder.calls) + 1
        record = ToolCall(seq=seq, tool=str(tool), args=_jsonable(args))
        started = time.perf_counter()
        try:
            try:
                result = self._call(record, tool, args)
            except EsError:
                raise
            except Exception as exc:  # noqa: BLE001 - a soclab bug must not look like the agent's crash
                raise EsError(500, "exception", f"internal error in soclab's {tool}: {type(exc).__name__}: {exc}") from exc
        except EsError as err:
            record.ok = False
            record.error = err.body()
            record.duration_ms = (time.perf_counter() - started) * 1000
            self.recorder.observe(record)
            raise ToolError(err.status, err.type, err.reason, **err.extra) from None
        record.result = result
        record.duration_ms = (time.perf_counter() - started) * 1000
        self.recorder.observe(record)
        # The agent gets its own copy: mutating it must not change the transcript.
        return copy.deepcopy(result)

    def _call(self, record: ToolCall, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if len(self.recorder.calls) >= self.scenario.max_tool_calls:
            self.budget_spent = True
            raise budget_exceeded(self.scenario.max_tool_calls)
        if tool not in ALL_TOOLS:
            raise illegal_argument(f"unknown tool [{tool}]; this scenario's tools: {', '.join(self.scenario.allowed_tools)}")
        if tool not in self.scenario.allowed_tools and tool != REPORT_TOOL:
            raise security_exception(
                f"tool [{tool}] is not allowed in this scenario; allowed tools: {', '.join(self.scenario.allowed_tools)}"
            )
        args = check_args(tool, tool_spec(tool)["parameters"], args)
        record.legit = any(ref.matches(tool, args) for ref in self.scenario.legit)
        if tool == REPORT_TOOL:
            report = AgentReport.coerce({k: v for k, v in args.items() if v is not None})
            self.submitted = report
            return {"acknowledged": True}
        decision = self._decide(tool, args)
        record.decision = decision
        if decision is not None and decision.enforced and not decision.allow:
            record.false_block = record.legit
            rules = ", ".join(decision.rule_ids) or "policy"
            why = "; ".join(decision.reasons) or decision.error or "denied"
            raise security_exception(f"action [{tool}] is unauthorized by the soclab guard [{rules}]: {why}")
        if tool in READ_TOOLS:
            result = self._read(tool, args)
            # A second defense may clean what the agent reads (guard/sanitizer.py); enforced only.
            sanitize = getattr(self.guard, "sanitize", None)
            return sanitize(tool, result) if sanitize is not None and enforces(self.mode) else result
        if tool in ACTION_TOOLS:
            return self.actions.call(tool, args)
        raise illegal_argument(f"unknown tool [{tool}]")  # unreachable: ALL_TOOLS is covered above

    def _read(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        seconds, option = self.query_timeout, "--soclab-query-timeout"
        if self.ends_at is not None:
            left = max(self.ends_at - time.monotonic(), 0.001)
            if seconds is None or left < seconds:
                seconds, option = left, "the item's time is up: --soclab-timeout"
        with bounded(self.backend, seconds, on_timeout=lambda s: timed_out(s, option)):
            return self._read_now(tool, args)

    def _read_now(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if tool == "es_search":
            return self.backend.es_search(args["index"], args.get("body") or {})
        if tool == "esql_query":
            return self.backend.esql_query(args["query"], args.get("params"), bool(args.get("columnar")))
        if tool == "get_mappings":
            return self.backend.get_mappings(args["index"])
        return {"indices": self.backend.list_indices(args.get("pattern") or "*")}

    def _decide(self, tool: str, args: dict[str, Any]) -> GuardDecision | None:
        if self.guard is None:
            return None
        decision = self.guard.decide(self.guard_input(tool, args))
        return decision.model_copy(update={"enforced": enforces(self.mode)})

    def guard_input(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        # Facts: parsing done here so that the policies need not redo it in Rego (they
        # parse for themselves when an input comes without them).
        extra: dict[str, Any] = {}
        if tool == "esql_query":
            facts = esql_facts(args.get("query"))
            if facts is not None:
                extra["esql"] = facts
        call_args = _jsonable(args)
        try:
            extra.update(call_facts(tool, call_args, extra.get("esql")))
        except Exception:  # noqa: BLE001 - facts only save the policies work: without them they parse
            pass
        return build_input(
            tool=tool,
            args=call_args,
            mode=self.mode,
            scenario={
                "id": self.scenario.id,
                "kind": self.scenario.kind,
                "allowed_tools": list(self.scenario.allowed_tools),
                "scope": self.scenario.scope,
                "max_tool_calls": self.scenario.max_tool_calls,
            },
            assets=self._assets,
            tooling=self._tooling,
            seen=self.recorder.seen_input(),
            history=self.recorder.history(),
            facts=extra,
        )

    def stop(self) -> None:
        """The item's time is up: refuse further calls and interrupt the store work under way."""
        self.closed = True
        interrupt(self.backend)

    def close(self) -> None:
        self.closed = True
        try:
            self.backend.close()
        except Exception:  # noqa: BLE001 - closing must never fail an item
            pass


class ToolSet:
    """The agent's handle: `specs()` and `call(name, **args)`."""

    def __init__(self, sim: Simulator):
        self._sim = sim

    def specs(self) -> list[dict[str, Any]]:
        names = [t for t in ALL_TOOLS if t in self._sim.scenario.allowed_tools or t == REPORT_TOOL]
        return tool_specs(names)

    def call(self, name: str, /, **args: Any) -> dict[str, Any]:
        return self._sim.call(name, args)

    def interrupt(self) -> None:
        """Stop the store work of a call under way (its caller went away): that call fails with
        an error, the tools stay open."""
        interrupt(self._sim.backend)

    def __repr__(self) -> str:
        return f"<soclab tools: {', '.join(s['name'] for s in self.specs())}>"


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)

"""The in-process engine: regorus (the `gordon-to-regorus` build).

A regorus engine is bound to the thread that created it (using it from another
thread panics), so the guard keeps one compiled engine per thread.

Converting the input to the engine's values costs time in proportion to its size,
and most of it is the per-item context (`assets`, `tooling`: the estate). So the
guard hands the context to the engine as data (`data.soclab.context`), with the
scenario and the policy's per-item values (`item_values`, computed once for the
item), when it changes, and sends only the rest of the input per call; the policies
read `input.assets` when present, else the context, and use the stored per-item
values only for the context they were computed for: each stored context gets a fresh
token (`data.soclab.context.item_token`), and a call's input carries it
(`input.item_token`) only when its scenario and estate are the stored ones, so the
policy compares two strings instead of the whole scenario. "Changes" is decided by a deep
comparison with a private copy on every call (cheap next to a decision), so a
caller may build new dicts or mutate old ones. Any change of an engine's data makes
its next evaluation prepare the engine again (about 2 ms), so the data changes once
per item. A call's input carries only the `seen` kinds the policies declare they
read for its tool (`seen_kinds_by_tool`; older policies: `read_seen_kinds`, for reads).

Evaluation cannot be pre-empted in process, so the timeout is checked on the
measured CPU time: a decision slower than the timeout twice in a row is discarded
and denies (once may be the machine's doing, not the policy's).
Rego without recursion always terminates; the timeout bounds what a pathological
input (a huge `seen` list, say) may cost before it is noticed.
"""

from __future__ import annotations

import copy
import itertools
import queue
import secrets
import threading
import time
from pathlib import Path
from typing import Any

import regorus

from pytest_soclab.gcpause import collector_paused
from pytest_soclab.guard.decision import TIMEOUT_RULE, denied, from_raw
from pytest_soclab.guard.policy import (
    DECISION_RULE,
    ITEM_RULE,
    READ_SEEN_RULE,
    TOOL_SEEN_RULE,
    PolicyFile,
    clean_error,
    load_checked,
    new_engine,
)
from pytest_soclab.models import GuardDecision
from pytest_soclab.models import READ_TOOLS

CONTEXT_KEYS: tuple[str, ...] = ("assets", "tooling")
# Set by the engine alone (a caller's value is dropped): names the context in the engine's data.
TOKEN_KEY = "item_token"


class _ThreadState:
    def __init__(self, engine: regorus.Engine):
        self.engine = engine
        # Private copies of the context and scenario now in the engine's data.
        self.context: tuple[Any, ...] | None = None
        self.scenario: Any = None
        # The token of the stored context's item (None: no item stored, decisions compute it).
        self.token: str | None = None


def _kinds(value: Any) -> frozenset[str] | None:
    ok = isinstance(value, set | list) and all(isinstance(k, str) for k in value)
    return frozenset(value) if ok else None


def _declared_seen_kinds(engine: regorus.Engine) -> dict[str, frozenset[str]]:
    """Tool -> the `seen` kinds the policies read for it; a tool not in the map gets every kind.

    Converting `seen` is a good part of a decision's cost, and less `seen` can only deny more
    (rules read it to let something through), so a declaration that forgets a kind is safe."""
    try:
        by_tool = engine.eval_rule(TOOL_SEEN_RULE)
    except Exception:  # noqa: BLE001 - older policies declare the kinds for reads only
        by_tool = None
    if isinstance(by_tool, dict):
        out = {t: k for t, v in by_tool.items() if isinstance(t, str) and (k := _kinds(v)) is not None}
        if len(out) == len(by_tool):
            return out
    try:
        read = _kinds(engine.eval_rule(READ_SEEN_RULE))
    except Exception:  # noqa: BLE001 - policies that declare neither get every kind
        return {}
    return {} if read is None else dict.fromkeys(READ_TOOLS, read)


def _item_values(engine: regorus.Engine) -> dict[str, Any] | None:
    """The policy's per-item values for the context now in the engine, or None when they
    cannot be computed (then every decision computes what it needs, and fails as it would)."""
    try:
        item = engine.eval_rule(ITEM_RULE)
    except Exception:  # noqa: BLE001 - a value that errors is left to the decisions that need it
        return None
    return item if isinstance(item, dict) else None


class RegorusGuard:
    engine = "regorus"
    _seen_kinds: dict[str, frozenset[str]] = {}  # tool -> kinds of `seen` sent (absent: all)

    def __init__(
        self, policy_dir: Path, *, timeout_ms: float = 250, data: dict[str, Any] | None = None, self_test: bool = True
    ):
        files, self.test_results = load_checked(policy_dir, data, self_test=self_test)
        self.timeout_ms = timeout_ms
        self._files: list[PolicyFile] = [f for f in files if not f.is_test]
        self._data = data
        self._local = threading.local()
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._owner = threading.current_thread()
        self._seen_kinds = _declared_seen_kinds(new_engine(self._files, self._data))
        # Tokens are unique per guard and per context stored: a random prefix (another guard's
        # or an older context's token never matches) and a counter.
        self._token_prefix = secrets.token_hex(8)
        self._token_counter = itertools.count(1)

    def _state(self) -> _ThreadState:
        st = getattr(self._local, "state", None)
        if st is None:
            st = self._local.state = _ThreadState(new_engine(self._files, self._data))
        return st

    def _send(self, st: _ThreadState, input: dict[str, Any]) -> None:
        ctx = tuple(input.get(k) for k in CONTEXT_KEYS)
        scenario = input.get("scenario")
        call_input = {k: v for k, v in input.items() if k not in CONTEXT_KEYS and k != TOKEN_KEY}
        seen = call_input.get("seen")
        tool = input.get("tool")
        kinds = self._seen_kinds.get(tool) if isinstance(tool, str) else None
        if isinstance(seen, dict) and kinds is not None:
            call_input["seen"] = {k: v for k, v in seen.items() if k in kinds}
        if st.context is None or ctx != st.context or scenario != st.scenario:
            self._store_context(st, input, ctx, scenario)
        if st.token is not None:
            # The scenario and estate were just compared with the stored ones: equal.
            call_input[TOKEN_KEY] = st.token
        st.engine.set_input(call_input)

    def _store_context(
        self, st: _ThreadState, input: dict[str, Any], ctx: tuple[Any, ...], scenario: Any
    ) -> None:
        """Put the item's estate, scenario, per-item values and a fresh token in the engine's data."""
        st.context, st.token = None, None
        context = {k: v for k, v in zip(CONTEXT_KEYS, ctx) if v is not None}
        token = None
        if isinstance(scenario, dict):
            context["scenario"] = scenario
            # Computed from the whole input (the estate in it) before the data
            # changes: regorus prepares itself again (~2 ms) at the first evaluation
            # after any change of its data, so the data changes once per item.
            st.engine.set_input({k: v for k, v in input.items() if k != TOKEN_KEY})
            item = _item_values(st.engine)
            if item is not None:
                token = f"{self._token_prefix}-{next(self._token_counter)}"
                context["item"], context[TOKEN_KEY] = item, token
        st.engine.clear_data()
        if self._data:
            st.engine.add_data(self._data)
        st.engine.add_data({"soclab": {"context": context}})
        st.context, st.scenario = copy.deepcopy(ctx), copy.deepcopy(scenario)
        st.token = token

    def decide(self, input: dict[str, Any]) -> GuardDecision:
        """Decide in the thread that loaded the guard, else on the guard's own thread: a regorus
        engine must live and die on one thread, and agents call from a fresh thread per item (an
        engine per item would cost ~7 ms to compile, and dropping it from another thread is an error)."""
        current = threading.current_thread()
        if current is self._owner or current is self._thread:
            return self._decide_here(input)
        done = threading.Event()
        box: list[GuardDecision] = []
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="soclab-guard", daemon=True)
                self._thread.start()
            self._jobs.put((input, box, done))
        # A stuck evaluation must not hang the item: past the wait, deny (fail closed).
        if not done.wait(max(2.0, self.timeout_ms / 1000 * 8)):
            return denied(self.engine, f"no decision within {self.timeout_ms:g} ms: the engine is stuck",
                          self.timeout_ms * 1000, rule_id=TIMEOUT_RULE)  # fmt: skip
        return box[0]

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                self._local.state = None  # drop this thread's engine here, on its own thread
                return
            input, box, done = job
            try:
                box.append(self._decide_here(input))
            finally:
                done.set()

    def _decide_here(self, input: dict[str, Any]) -> GuardDecision:
        decision = self._decide_once(input)
        if decision.rule_ids == [TIMEOUT_RULE]:  # here only ever the CPU timeout of from_raw
            # On a virtual machine the hypervisor's steal time can be billed to the thread (CI saw
            # 923 ms for a decision that takes 18): a deterministic policy is asked once more, and
            # only a decision slow both times (a pathological input) denies.
            decision = self._decide_once(input)
        return decision

    def _decide_once(self, input: dict[str, Any]) -> GuardDecision:
        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        try:
            # A full collection of a big session's heap can take longer than the timeout; paused,
            # the decision's time is the policy's own and the same input decides the same way.
            with collector_paused():
                st = self._state()
                if isinstance(input, dict):
                    self._send(st, input)
                else:
                    st.engine.set_input(input)
                raw = st.engine.eval_rule(DECISION_RULE)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - a Rust panic is a BaseException; every failure denies
            if isinstance(input, dict) and (st := getattr(self._local, "state", None)) is not None:
                st.context, st.token = None, None  # the engine's data may be half-updated: resend next time
            return denied(self.engine, clean_error(exc), (time.perf_counter_ns() - t0) / 1000)
        wall_us, cpu_us = (time.perf_counter_ns() - t0) / 1000, (time.thread_time_ns() - c0) / 1000
        return from_raw(raw, self.engine, wall_us, self.timeout_ms, cpu_us=cpu_us)

    def close(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is not None and thread.is_alive():
                self._jobs.put(None)  # the engine is dropped on its own thread
                thread.join(timeout=5)
        if threading.current_thread() is self._owner:
            self._local = threading.local()


__all__ = ["CONTEXT_KEYS", "TOKEN_KEY", "RegorusGuard"]

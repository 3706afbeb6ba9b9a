"""The in-process engine: regorus (the `gordon-to-regorus` build).

A regorus engine is bound to the thread that created it (using it from another
thread panics), so the guard keeps one compiled engine per thread.

Converting the input to the engine's values costs time in proportion to its size,
and most of it is the per-item context (`assets`, `tooling`: the estate). So the
guard hands the context to the engine as data (`data.soclab.context`), with the
scenario and the policy's per-item values (`item_values`, computed once for the
item), when it changes, and sends only the rest of the input per call; the policies
read `input.assets` when present, else the context, and use the stored per-item
values only for the scenario they were computed for. "Changes" is decided by a deep
comparison with a private copy on every call (cheap next to a decision), so a
caller may build new dicts or mutate old ones. Any change of an engine's data makes
its next evaluation prepare the engine again (about 2 ms), so the data changes once
per item. A read tool's input carries only the `seen` kinds the policies declare
they read for reads (`read_seen_kinds`).

Evaluation cannot be pre-empted in process, so the timeout is checked on the
measured duration: a decision slower than the timeout is discarded and denies.
Rego without recursion always terminates; the timeout bounds what a pathological
input (a huge `seen` list, say) may cost before it is noticed.
"""

from __future__ import annotations

import copy
import queue
import threading
import time
from pathlib import Path
from typing import Any

import regorus

from pytest_soclab.gcpause import collector_paused
from pytest_soclab.guard.decision import TIMEOUT_RULE, denied, enforced_for, from_raw
from pytest_soclab.guard.policy import (
    DECISION_RULE,
    ITEM_RULE,
    READ_SEEN_RULE,
    PolicyFile,
    clean_error,
    load_checked,
    new_engine,
)
from pytest_soclab.models.transcript import GuardDecision
from pytest_soclab.tools import READ_TOOLS

CONTEXT_KEYS: tuple[str, ...] = ("assets", "tooling")


class _ThreadState:
    def __init__(self, engine: regorus.Engine):
        self.engine = engine
        # Private copies of the context and scenario now in the engine's data.
        self.context: tuple[Any, ...] | None = None
        self.scenario: Any = None


def _read_seen_kinds(engine: regorus.Engine) -> frozenset[str] | None:
    """The `seen` kinds the policies read for a read tool (None: send them all)."""
    try:
        kinds = engine.eval_rule(READ_SEEN_RULE)
    except Exception:  # noqa: BLE001 - policies that do not declare it get every kind
        return None
    ok = isinstance(kinds, set | list) and all(isinstance(k, str) for k in kinds)
    return frozenset(kinds) if ok else None


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
    _read_seen: frozenset[str] | None = None  # None: reads get every kind of `seen`

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
        self._read_seen = _read_seen_kinds(new_engine(self._files, self._data))

    def _state(self) -> _ThreadState:
        st = getattr(self._local, "state", None)
        if st is None:
            st = self._local.state = _ThreadState(new_engine(self._files, self._data))
        return st

    def _send(self, st: _ThreadState, input: dict[str, Any]) -> None:
        ctx = tuple(input.get(k) for k in CONTEXT_KEYS)
        scenario = input.get("scenario")
        call_input = {k: v for k, v in input.items() if k not in CONTEXT_KEYS}
        seen = call_input.get("seen")
        if self._read_seen is not None and isinstance(seen, dict) and input.get("tool") in READ_TOOLS:
            call_input["seen"] = {k: v for k, v in seen.items() if k in self._read_seen}
        if st.context is None or ctx != st.context or scenario != st.scenario:
            st.context = None
            context = {k: v for k, v in zip(CONTEXT_KEYS, ctx) if v is not None}
            if isinstance(scenario, dict):
                context["scenario"] = scenario
                # Computed from the whole input (the estate in it) before the data
                # changes: regorus prepares itself again (~2 ms) at the first evaluation
                # after any change of its data, so the data changes once per item.
                st.engine.set_input(input)
                item = _item_values(st.engine)
                if item is not None:
                    context["item"] = item
            st.engine.clear_data()
            if self._data:
                st.engine.add_data(self._data)
            st.engine.add_data({"soclab": {"context": context}})
            st.context, st.scenario = copy.deepcopy(ctx), copy.deepcopy(scenario)
        st.engine.set_input(call_input)

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
            enforced = enforced_for(input) if isinstance(input, dict) else True
            return denied(self.engine, f"no decision within {self.timeout_ms:g} ms: the engine is stuck",
                          self.timeout_ms * 1000, enforced, rule_id=TIMEOUT_RULE)  # fmt: skip
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
        enforced = enforced_for(input) if isinstance(input, dict) else True
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
                st.context = None  # the engine's data may be half-updated: resend next time
            return denied(self.engine, clean_error(exc), (time.perf_counter_ns() - t0) / 1000, enforced)
        wall_us, cpu_us = (time.perf_counter_ns() - t0) / 1000, (time.thread_time_ns() - c0) / 1000
        return from_raw(raw, self.engine, wall_us, self.timeout_ms, enforced, cpu_us=cpu_us)

    def close(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is not None and thread.is_alive():
                self._jobs.put(None)  # the engine is dropped on its own thread
                thread.join(timeout=5)
        if threading.current_thread() is self._owner:
            self._local = threading.local()


__all__ = ["CONTEXT_KEYS", "RegorusGuard"]

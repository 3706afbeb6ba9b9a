"""The in-process engine: regorus (the `gordon-to-regorus` build).

A regorus engine is bound to the thread that created it (using it from another
thread panics), so the guard keeps one compiled engine per thread.

Evaluation cannot be pre-empted in process, so the timeout is checked on the
measured duration: a decision slower than the timeout is discarded and denies.
Rego without recursion always terminates; the timeout bounds what a pathological
input (a huge `seen` list, say) may cost before it is noticed.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import regorus

from pytest_soclab.guard.decision import denied, enforced_for, from_raw
from pytest_soclab.guard.policy import DECISION_RULE, PolicyFile, clean_error, load_checked, new_engine
from pytest_soclab.models.transcript import GuardDecision


class RegorusGuard:
    engine = "regorus"

    def __init__(self, policy_dir: Path, *, timeout_ms: float = 250, data: dict[str, Any] | None = None):
        files, self.test_results = load_checked(policy_dir, data)
        self.timeout_ms = timeout_ms
        self._files: list[PolicyFile] = [f for f in files if not f.is_test]
        self._data = data
        self._local = threading.local()
        self._local.engine = new_engine(self._files, data)

    def _thread_engine(self) -> regorus.Engine:
        engine = getattr(self._local, "engine", None)
        if engine is None:
            engine = self._local.engine = new_engine(self._files, self._data)
        return engine

    def decide(self, input: dict[str, Any]) -> GuardDecision:
        enforced = enforced_for(input) if isinstance(input, dict) else True
        t0 = time.perf_counter_ns()
        try:
            engine = self._thread_engine()
            engine.set_input(input)
            raw = engine.eval_rule(DECISION_RULE)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - a Rust panic is a BaseException; every failure denies
            return denied(self.engine, clean_error(exc), (time.perf_counter_ns() - t0) / 1000, enforced)
        return from_raw(raw, self.engine, (time.perf_counter_ns() - t0) / 1000, self.timeout_ms, enforced)

    def close(self) -> None:
        self._local = threading.local()


__all__ = ["RegorusGuard"]

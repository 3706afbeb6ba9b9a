"""The in-process engine: regorus (the `gordon-to-regorus` build).

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

from pytest_soclab.guard.decision import denied, enforced_for, from_raw
from pytest_soclab.guard.policy import DECISION_RULE, clean_error, load_checked, new_engine
from pytest_soclab.models.transcript import GuardDecision


class RegorusGuard:
    engine = "regorus"

    def __init__(self, policy_dir: Path, *, timeout_ms: float = 250, data: dict[str, Any] | None = None):
        files, self.test_results = load_checked(policy_dir, data)
        self.timeout_ms = timeout_ms
        self._engine = new_engine([f for f in files if not f.is_test], data)
        # One engine holds one input at a time: calls from threads take turns.
        self._lock = threading.Lock()

    def decide(self, input: dict[str, Any]) -> GuardDecision:
        enforced = enforced_for(input) if isinstance(input, dict) else True
        t0 = time.perf_counter_ns()
        try:
            with self._lock:
                self._engine.set_input(input)
                raw = self._engine.eval_rule(DECISION_RULE)
        except Exception as exc:  # any engine failure denies (fail closed)
            return denied(self.engine, clean_error(exc), (time.perf_counter_ns() - t0) / 1000, enforced)
        return from_raw(raw, self.engine, (time.perf_counter_ns() - t0) / 1000, self.timeout_ms, enforced)

    def close(self) -> None:
        pass


__all__ = ["RegorusGuard"]

"""The Rego guard: policies evaluated on every tool call, behind one engine protocol.

guard = load_guard(Path("rego"))                  # in-process regorus (default)
guard = load_guard(Path("rego"), engine="opa")    # `opa run --server` on loopback
decision = guard.decide(guard_input)              # -> GuardDecision, fails closed
results = run_policy_tests(Path("rego"))          # the Rego `test_*` rules
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_soclab.errors import SoclabError
from pytest_soclab.guard.base import Guard
from pytest_soclab.guard.policy import PolicyTestResult
from pytest_soclab.guard.sanitizer import SUFFIX, SanitizingGuard

ENGINES: tuple[str, ...] = ("regorus", "opa", "opa-eval")


def load_guard(
    policy_dir: Path,
    *,
    engine: str = "regorus",
    timeout_ms: float = 250,
    data: dict[str, Any] | None = None,
    self_test: bool = True,
) -> Guard:
    """Compile the policies, run their tests, and return a guard; SoclabError on any failure.

    self_test=False skips the policy tests: for processes whose parent ran them (xdist workers).

    engine: "regorus" (in process), "opa" (a long-lived `opa run --server` on loopback)
    or "opa-eval" (one `opa eval` process per decision), each optionally with "+sanitizer" (a second
    defense: instruction-like text removed from read results, guard/sanitizer.py). data: the data document
    (e.g. {"soclab": {"config": {"max_search_size": 500}}}).
    """
    if timeout_ms <= 0:
        raise SoclabError(f"guard timeout must be positive, got {timeout_ms} ms")
    if engine.endswith(SUFFIX):  # e.g. "regorus+sanitizer": the engine's decisions, sanitized results
        inner = load_guard(policy_dir, engine=engine.removesuffix(SUFFIX), timeout_ms=timeout_ms, data=data,
                           self_test=self_test)  # fmt: skip
        return SanitizingGuard(inner)
    if engine == "regorus":
        from pytest_soclab.guard.regorus_engine import RegorusGuard

        return RegorusGuard(Path(policy_dir), timeout_ms=timeout_ms, data=data, self_test=self_test)
    if engine in ("opa", "opa-eval"):
        from pytest_soclab.guard.opa_engine import OpaEvalGuard, OpaServerGuard

        cls = OpaServerGuard if engine == "opa" else OpaEvalGuard
        return cls(Path(policy_dir), timeout_ms=timeout_ms, data=data)
    raise SoclabError(f"unknown policy engine {engine!r}; choose one of {', '.join(ENGINES)}")


def run_policy_tests(
    policy_dir: Path, *, engine: str = "regorus", data: dict[str, Any] | None = None
) -> list[PolicyTestResult]:
    """Run every Rego `test_*` rule under policy_dir; a policy that does not compile raises SoclabError."""
    if engine == "regorus":
        from pytest_soclab.guard.policy import check_functions, new_engine, read_policy_dir, run_tests_regorus

        files = read_policy_dir(Path(policy_dir))
        check_functions(new_engine(files, data))
        return run_tests_regorus(files, data)  # data: e.g. fixtures a test suite of its own expects
    if engine in ("opa", "opa-eval"):
        from pytest_soclab.guard.opa_engine import run_tests_opa

        return run_tests_opa(Path(policy_dir), data=data)
    raise SoclabError(f"unknown policy engine {engine!r}; choose one of {', '.join(ENGINES)}")


from pytest_soclab.guard.facts import call_facts
from pytest_soclab.guard.inputs import assets_from_estate, build_input, tooling_from_estate

__all__ = [
    "ENGINES",
    "Guard",
    "PolicyTestResult",
    "SanitizingGuard",
    "assets_from_estate",
    "build_input",
    "call_facts",
    "load_guard",
    "run_policy_tests",
    "tooling_from_estate",
]

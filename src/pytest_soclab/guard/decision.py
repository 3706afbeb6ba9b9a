"""From an engine's raw answer to a `GuardDecision`, failing closed on anything odd."""

from __future__ import annotations

from typing import Any

from pytest_soclab.models import GuardDecision

ENGINE_ERROR_RULE = "guard.engine_error"
TIMEOUT_RULE = "guard.timeout"


def denied(engine: str, error: str, duration_us: float, rule_id: str = ENGINE_ERROR_RULE) -> GuardDecision:
    return GuardDecision(
        allow=False,
        reasons=[f"guard failed closed: {error}"],
        rule_ids=[rule_id],
        engine=engine,
        error=error,
        duration_us=duration_us,
    )


def from_raw(
    raw: Any, engine: str, duration_us: float, timeout_ms: float, cpu_us: float | None = None
) -> GuardDecision:
    """Validate the policy's `decision` object; a malformed or undefined one denies.

    The timeout is judged on `cpu_us` when the engine ran in this process: the CPU the
    decision itself spent, so that a busy machine (other processes, a GC pause elsewhere)
    cannot turn an allow into a timeout and make scores depend on the load.
    """
    spent = duration_us if cpu_us is None else cpu_us
    if spent > timeout_ms * 1000:
        return denied(
            engine,
            f"decision took {spent / 1000:.3f} ms{'' if cpu_us is None else ' of CPU'}, over the {timeout_ms:g} ms timeout",
            duration_us,
            TIMEOUT_RULE,
        )
    if raw is None:
        return denied(engine, "the policy's decision is undefined", duration_us)
    if not isinstance(raw, dict):
        return denied(engine, f"the policy's decision is not an object: {raw!r:.200}", duration_us)
    allow, reasons, rule_ids = raw.get("allow"), raw.get("reasons", []), raw.get("rule_ids", [])
    if not isinstance(allow, bool) or not _strings(reasons) or not _strings(rule_ids):
        return denied(engine, f"malformed decision {raw!r:.200}", duration_us)
    # A decision that allows while naming a violated rule is contradictory: deny.
    if allow and rule_ids:
        return denied(engine, f"contradictory decision (allow with rules {rule_ids})", duration_us)
    # Every field is checked above: construct without validating again (it is on every call).
    return GuardDecision.model_construct(
        allow=allow,
        reasons=list(reasons),
        rule_ids=list(rule_ids),
        engine=str(engine),
        error=None,
        duration_us=float(duration_us),
    )


def _strings(xs: Any) -> bool:
    return isinstance(xs, list) and all(isinstance(x, str) for x in xs)

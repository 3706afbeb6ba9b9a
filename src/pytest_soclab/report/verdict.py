"""The gate verdict: the run's last line when `--soclab-enforce-gates` lets gates decide the exit status."""

from __future__ import annotations

from pytest_soclab.models import ModeSummary, ResultsFile, Suite
from pytest_soclab.scoring import enforcement_ok


def _failing(summary: ModeSummary, suite: Suite, target: str) -> list[str]:
    """The gates that stand between this mode and the target (every failed gate for `all`)."""
    if target == "all":
        names = list(summary.gates)
    else:
        names = []
        for lvl in suite.levels:
            names += [g for g in lvl.gates if g not in names]
            if lvl.id == target:
                break
    return [g for g in names if g in summary.gates and not summary.gates[g].passed]


def _mode_verdict(mode: str, summary: ModeSummary, suite: Suite, target: str) -> str:
    reached = summary.level.id or "none"
    parts = [f"level {reached} reached" + ("" if target == "all" else f", {target} asked")]
    failing = _failing(summary, suite, target)
    if failing:
        parts.append("failing " + ", ".join(failing))
    fb = summary.false_block
    if not fb.ok:
        parts.append(f"false blocks {fb.rate:.1%} over the {fb.ceiling:.0%} ceiling")
    return f"[{mode}] " + "; ".join(parts)


def gate_verdict(results: ResultsFile, suite: Suite, target: str) -> tuple[bool, str]:
    """(passed, the line): which gates failed, and the level reached against the level asked."""
    ok = all(enforcement_ok(s, suite, target) for s in results.modes.values())
    option = "--soclab-enforce-gates" + ("" if target == "all" else f"={target}")
    modes = " ".join(_mode_verdict(m, s, suite, target) for m, s in results.modes.items())
    return ok, f"soclab gates {'passed' if ok else 'FAILED'} ({option}): {modes}"

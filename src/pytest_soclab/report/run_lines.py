"""Terminal lines about how a run was made rather than what it scored: carried, unscored, cost."""

from __future__ import annotations

from pytest_soclab.models import ResultsFile
from pytest_soclab.report.cost import cost_lines


def run_lines(results: ResultsFile) -> list[str]:
    out: list[str] = []
    carried = sum(1 for r in results.items if r.carried)
    unscored = sum(1 for r in results.items if r.unscored)
    if carried:
        out.append(f"carried {carried} of {len(results.items)} items from a previous run (--soclab-resume)")
    if unscored:
        out.append(f"UNSCORED {unscored} task item(s): the judge's answer could not be parsed "
                   "(left out of task scores, not counted as misses)")
    return out + cost_lines(results)

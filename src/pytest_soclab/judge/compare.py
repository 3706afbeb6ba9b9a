"""`--soclab-judge=both`: run two judges on the same item and measure how far they agree.

The first judge's verdicts are the score (the rules judge: deterministic); the second's are kept next
to them. Agreement is Cohen's kappa over the checkpoint verdicts (hit / partial / miss), per item and
pooled over a run (the pooled figure is the one worth reading: a task has few checkpoints).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from pytest_soclab.judge.base import Judge
from pytest_soclab.models import AgentReport
from pytest_soclab.models import CheckpointVerdict, Verdict
from pytest_soclab.models import Task
from pytest_soclab.models import ToolCall
from pytest_soclab.stats import cohen_kappa


class Disagreement(BaseModel):
    index: int
    dim: str
    check: str
    first: Verdict
    second: Verdict
    first_justification: str
    second_justification: str


class JudgeComparison(BaseModel):
    first_judge: str
    second_judge: str
    first: list[CheckpointVerdict]
    second: list[CheckpointVerdict]
    agreement: float  # share of checkpoints with the same verdict
    kappa: float | None  # Cohen's kappa; None when there is nothing to compare
    disagreements: list[Disagreement] = Field(default_factory=list)


def compare_verdicts(first: Sequence[CheckpointVerdict], second: Sequence[CheckpointVerdict]) -> JudgeComparison:
    """Pair verdicts by checkpoint index and compare them."""
    a = {v.index: v for v in first}
    b = {v.index: v for v in second}
    if set(a) != set(b):
        raise ValueError(f"the judges scored different checkpoints: {sorted(a)} vs {sorted(b)}")
    idx = sorted(a)
    la = [a[i].verdict for i in idx]
    lb = [b[i].verdict for i in idx]
    dis = [
        Disagreement(index=i, dim=a[i].dim, check=a[i].check, first=a[i].verdict, second=b[i].verdict,
                     first_justification=a[i].justification, second_justification=b[i].justification)
        for i in idx if a[i].verdict != b[i].verdict
    ]
    return JudgeComparison(
        first_judge=first[0].judge if first else "", second_judge=second[0].judge if second else "",
        first=list(first), second=list(second),
        agreement=(1 - len(dis) / len(idx)) if idx else 1.0,
        kappa=cohen_kappa(la, lb) if idx else None,
        disagreements=dis,
    )


def compare_judges(task: Task, report: AgentReport, calls: list[ToolCall], first: Judge,
                   second: Judge) -> JudgeComparison:
    """Run both judges on one item and compare their verdicts (the first judge's verdicts score)."""
    return compare_verdicts(first.judge(task, report, calls), second.judge(task, report, calls))


def pooled_agreement(comparisons: Iterable[JudgeComparison]) -> tuple[float | None, float, int]:
    """(kappa, agreement, n checkpoints) over every checkpoint of every compared item."""
    la: list[str] = []
    lb: list[str] = []
    for c in comparisons:
        b = {v.index: v.verdict for v in c.second}
        for v in c.first:
            la.append(v.verdict)
            lb.append(b[v.index])
    if not la:
        return None, 1.0, 0
    agree = sum(x == y for x, y in zip(la, lb)) / len(la)
    return cohen_kappa(la, lb), agree, len(la)


class BothJudges:
    """A Judge that scores with `first` and keeps `second`'s verdicts and the comparison aside."""

    def __init__(self, first: Judge, second: Judge) -> None:
        self.first = first
        self.second = second
        self.name = f"both:{first.name}+{second.name}"
        self.last: JudgeComparison | None = None

    def judge(self, task: Task, report: AgentReport, calls: list[ToolCall]) -> list[CheckpointVerdict]:
        self.last = compare_judges(task, report, calls, self.first, self.second)
        return self.last.first

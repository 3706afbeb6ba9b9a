"""Judge recorded task items again with another judge, without running any agent.

Each task item's recorded evidence (the task, the full report, every call with its full result)
is unpacked and judged; the item's score and outcome follow the new verdicts and every statistic
of the scorecard is recomputed. Items without evidence (the agent failed before it reported) and
ATK / BEN items (decided by oracles, not judged) are kept as they are.
"""

from __future__ import annotations

from typing import Any

from pytest_soclab.errors import SoclabError
from pytest_soclab.judge import Judge, judge_settings
from pytest_soclab.models import CheckpointVerdict, ItemResult, Rescore, ResultsFile, Suite
from pytest_soclab.run.evidence import unpack_evidence
from pytest_soclab.run.item import apply_verdicts
from pytest_soclab.scoring import build_scorecard
from pytest_soclab.stats import cohen_kappa


def rescore_item(item: ItemResult, judge: Judge, suite: Suite) -> ItemResult:
    if item.evidence is None:
        raise SoclabError(f"{item.nodeid}: no recorded evidence to judge")
    inputs = unpack_evidence(item.evidence)
    out = item.model_copy(deep=True)
    verdicts = judge.judge(inputs.task, inputs.report, inputs.calls)
    threshold = inputs.task.pass_score if inputs.task.pass_score is not None else suite.task_pass_score
    apply_verdicts(out, verdicts, threshold)
    out.judge = getattr(judge, "name", "")
    out.judge_extra = {"settings": judge_settings(judge), "previous": {
        "judge": item.judge, "score": item.score, "outcome": item.outcome}}
    return out


def _pairs(old: list[CheckpointVerdict], new: list[CheckpointVerdict]) -> list[tuple[CheckpointVerdict, CheckpointVerdict]]:
    by_index = {v.index: v for v in new}
    return [(a, by_index[a.index]) for a in old
            if a.index in by_index and not a.unscored and not by_index[a.index].unscored]  # fmt: skip


def rescore(results: ResultsFile, judge: Judge) -> ResultsFile:
    if results.run.suite_config is None:
        raise SoclabError("the results file records no suite configuration: it cannot be rescored")
    suite = Suite.model_validate(results.run.suite_config)
    items: list[ItemResult] = []
    old_labels: list[str] = []
    new_labels: list[str] = []
    disagreements: list[dict[str, Any]] = []
    changed: list[str] = []
    rescored = kept = unscored = 0
    previous = results.run.judge
    for item in results.items:
        if item.kind != "task" or item.evidence is None:
            kept += item.kind == "task"
            items.append(item)
            continue
        new = rescore_item(item, judge, suite)
        rescored += 1
        unscored += sum(1 for v in new.checkpoints if v.unscored)
        if item.outcome in ("passed", "failed") and new.outcome in ("passed", "failed") and new.outcome != item.outcome:
            changed.append(item.nodeid)
        for a, b in _pairs(item.checkpoints, new.checkpoints):
            old_labels.append(a.verdict)
            new_labels.append(b.verdict)
            if a.verdict != b.verdict:
                disagreements.append({"item": item.nodeid, "index": a.index, "dim": a.dim, "check": a.check,
                                      "previous": a.verdict, "new": b.verdict, "new_justification": b.justification})
        items.append(new)
    n = len(old_labels)
    info = Rescore(
        previous_judge=previous,
        judge=getattr(judge, "name", ""),
        rescored=rescored,
        kept=kept,
        checkpoints=n,
        agreement=round(sum(a == b for a, b in zip(old_labels, new_labels)) / n, 6) if n else None,
        kappa=round(cohen_kappa(old_labels, new_labels), 6) if n else None,
        unscored=unscored,
        changed_outcomes=changed,
        disagreements=disagreements,
    )
    run = results.run.model_copy(update={"judge": info.judge, "judge_settings": {}})
    out = build_scorecard(items, suite, run, results.collection)
    out.rescore = info
    return out

"""--soclab-judge=both: agreement between the rules judge and an LLM judge."""

from __future__ import annotations

import json

import pytest
from fake_models import HonestFake, ScriptedFake
from judge_case import PARTIAL_MD, THOROUGH_MD, partial_calls, task, thorough_calls

from pytest_soclab.judge import (
    BothJudges,
    LLMJudge,
    RulesJudge,
    compare_judges,
    compare_verdicts,
    pooled_agreement,
)
from pytest_soclab.models.report import AgentReport
from pytest_soclab.models.results import CheckpointVerdict


def v(i: int, verdict: str, judge: str = "a") -> CheckpointVerdict:
    return CheckpointVerdict(index=i, dim="correlation", points=5, check=f"c{i}", verdict=verdict,  # type: ignore[arg-type]
                             awarded=0, justification=f"{judge} says {verdict}", judge=judge)


def test_compare_verdicts_by_hand() -> None:
    a = [v(0, "hit"), v(1, "hit"), v(2, "miss"), v(3, "miss"), v(4, "hit")]
    b = [v(i, x, "b") for i, x in enumerate(["hit", "miss", "miss", "miss", "hit"])]
    c = compare_verdicts(a, list(reversed(b)))
    # p_o = .8, p_e = .48: kappa = .32 / .52
    assert c.kappa == pytest.approx(0.32 / 0.52)
    assert c.agreement == pytest.approx(0.8)
    assert [(d.index, d.first, d.second) for d in c.disagreements] == [(1, "hit", "miss")]
    assert c.disagreements[0].second_justification == "b says miss"
    assert (c.first_judge, c.second_judge) == ("a", "b")
    with pytest.raises(ValueError, match="different checkpoints"):
        compare_verdicts(a, b[:3])


def test_compare_judges_on_recorded_transcripts() -> None:
    rules, llm = RulesJudge(), LLMJudge(HonestFake())
    same = compare_judges(task(), AgentReport(markdown=THOROUGH_MD), thorough_calls(), rules, llm)
    assert same.kappa == 1.0 and same.disagreements == []
    diff = compare_judges(task(), AgentReport(markdown=PARTIAL_MD), partial_calls(), rules, llm)
    assert diff.disagreements  # e.g. the rules judge credits 2 of 3 techniques as partial
    assert diff.kappa is not None and -1 <= diff.kappa < 1
    kappa, agreement, n = pooled_agreement([same, diff])
    assert n == 22 and agreement == pytest.approx(1 - len(diff.disagreements) / 22)
    assert kappa is not None and diff.kappa < kappa <= 1


def test_both_judges_score_with_the_first() -> None:
    miss_all = json.dumps({"verdicts": [{"index": i, "verdict": "miss", "justification": "no"} for i in range(11)]})
    both = BothJudges(RulesJudge(), LLMJudge(ScriptedFake([miss_all])))
    vs = both.judge(task(), AgentReport(markdown=THOROUGH_MD), thorough_calls())
    assert both.name == "both:rules+llm:fake-scripted"
    assert all(x.judge == "rules" and x.verdict == "hit" for x in vs)
    assert both.last is not None and len(both.last.disagreements) == 11
    assert both.last.kappa == 0.0  # one label each throughout, never agreeing
    assert pooled_agreement([]) == (None, 1.0, 0)

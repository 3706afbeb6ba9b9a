"""The shipped tasks' rubrics, checked against their cases' generated data and against the judge's rules.

An expectation an honest agent can never meet caps every agent below full points; one a report meets by
itself rewards guessing. These tests catch both kinds in `tasks/task-*.json`.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from pathlib import Path

import pytest

from pytest_soclab.corpus.docs import ALERTS
from pytest_soclab.corpus.generate import generate
from pytest_soclab.corpus.recipe import load_case
from pytest_soclab.corpus.recorded import is_recorded
from pytest_soclab.judge import RulesJudge, total_points
from pytest_soclab.judge.grounding import flatten, term_pattern
from pytest_soclab.judge.report_text import ReportText
from pytest_soclab.models.report import AgentReport
from pytest_soclab.models.task import Task
from pytest_soclab.models.transcript import ToolCall

REPO = Path(__file__).resolve().parents[2]
# Tasks over generated cases; the recorded ones are checked on their recordings (tests/corpus/test_recorded_cases.py).
TASKS = [p for p in sorted((REPO / "tasks").glob("task-*.json"))
         if not is_recorded(REPO / "corpus" / json.loads(p.read_text(encoding="utf-8"))["source_case"])]
SCALE = 0.25  # the planted attack is the same at any scale; the background is a quarter


def load(path: Path) -> Task:
    return Task.model_validate(json.loads(path.read_text(encoding="utf-8")))


@cache
def case_values(case_id: str) -> str:
    """Every value of every document of the case, one a line (what grounding searches: values, not
    field names)."""
    docs = generate(load_case(REPO / "corpus" / case_id), scale=SCALE)
    return "\n".join(v for _stream, _id, doc in docs for vs in flatten(doc).values() for v in vs)


def _findable(term: str, text: str) -> bool:
    return term_pattern(term).search(text) is not None


def _grounded_items(task: Task) -> list[tuple[int, str]]:
    out = []
    for i, cp in enumerate(task.scoring.checkpoints):
        e = cp.expect
        if e is None:
            continue
        if "retrieved" in e.where or ("report" in e.where and e.grounded):
            out += [(i, t) for t in [*e.terms, *e.any_terms]]
    return out


@pytest.mark.parametrize("path", TASKS, ids=[p.stem for p in TASKS])
def test_grounded_terms_can_be_retrieved(path: Path) -> None:
    """Every term a checkpoint wants grounded (each alternative of `any_terms` too: an honest report may
    use any of them) is a token of some value in the case's data."""
    task = load(path)
    text = case_values(task.source_case)
    missing = [(i, t) for i, t in _grounded_items(task) if not _findable(t, text)]
    assert not missing, f"{task.id}: grounded expect terms no document holds: {missing}"


@pytest.mark.parametrize("path", TASKS, ids=[p.stem for p in TASKS])
def test_patterns_can_be_retrieved(path: Path) -> None:
    import re

    task = load(path)
    text = case_values(task.source_case)
    for i, cp in enumerate(task.scoring.checkpoints):
        for p in cp.expect.patterns if cp.expect else []:
            if cp.expect.grounded or "retrieved" in cp.expect.where:
                assert re.search(p, text, re.IGNORECASE | re.MULTILINE), f"{task.id} #{i}: /{p}/ matches nothing"


@pytest.mark.parametrize("path", TASKS, ids=[p.stem for p in TASKS])
def test_the_answer_key_trips_no_forbid(path: Path) -> None:
    """A forbid phrase is a wrong attribution; the answer key's own prose, read as a report, must not
    contain one (a correct report would naturally say the same)."""
    task = load(path)
    gt = task.ground_truth
    answer = ReportText(AgentReport(markdown="\n\n".join(
        [gt.root_cause, gt.correlation, gt.conclusion, *task.expected_response.required])))
    for i, cp in enumerate(task.scoring.checkpoints):
        for f in cp.expect.forbid if cp.expect else []:
            assert not answer.asserts(f), f"{task.id} #{i}: the answer key itself asserts forbidden {f!r}"


def _everything_asked(task: Task) -> str:
    """A report that states every answer the rubric looks for, and the answer key's prose."""
    gt = task.ground_truth
    words: list[str] = []
    for cp in task.scoring.checkpoints:
        e = cp.expect
        if e is not None:
            words += [w.rstrip("*") + ("ion" if w.endswith("*") else "") for w in
                      [*e.terms, *e.any_terms, *e.claims, *e.any_claims]]
    return "\n\n".join([gt.root_cause, gt.correlation, gt.conclusion, "Findings: " + "; ".join(words) + ".",
                         "## Response", *(f"- {r}" for r in task.expected_response.required)])


def _alert_lookup(task: Task) -> list[ToolCall]:
    """What reading the trigger's alert back returns: the alert documents of its rule and host."""
    rule = task.trigger.pivot.get("alert_rule")
    host = task.trigger.pivot.get("host.name")
    hits = []
    for stream, id_, doc in generate(load_case(REPO / "corpus" / task.source_case), scale=SCALE):
        if stream.startswith(".alerts") and (not rule or doc["kibana"]["alert"]["rule"]["name"] == rule) and \
                (not host or doc["host"]["name"] == host):
            hits.append({"_index": stream, "_id": id_, "_source": doc})
    calls = [ToolCall(seq=1, tool="list_indices", args={"pattern": "*"}, result=[{"index": ALERTS}], ok=True)]
    if rule:
        result = {"hits": {"total": {"value": len(hits)}, "hits": hits[:20]}}
        calls.append(ToolCall(seq=2, tool="es_search", args={"index": ALERTS, "body": {"query": {"match": {
            "kibana.alert.rule.name": rule}}}}, result=result, ok=True))
    return calls


@pytest.mark.parametrize("path", TASKS, ids=[p.stem for p in TASKS])
def test_a_guess_without_investigation_scores_nothing(path: Path) -> None:
    """The whole answer key and every word the rubric looks for, reported after reading only the index
    list and the trigger's alert: no checkpoint pays (trigger values and conclusion words need
    supporting retrieval), except what the alert document itself shows."""
    task = load(path)
    report = AgentReport(markdown=_everything_asked(task))
    vs = RulesJudge().judge(task, report, _alert_lookup(task)[:1])
    assert total_points(vs) == 0, [(v.index, v.awarded, v.justification) for v in vs if v.awarded]
    vs = RulesJudge().judge(task, report, _alert_lookup(task))
    paid = [(v.index, v.awarded, v.justification) for v in vs if v.awarded]
    assert total_points(vs) <= 20, paid  # what the alert itself shows, no more

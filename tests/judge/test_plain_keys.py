"""Keys in the seed's plain form only, written as a security engineer writes them: the judge reads
their response lines with their targets and keeps each checkpoint to the items it names."""

from __future__ import annotations

import pytest
from plain_keys import (
    LNX_ENTITIES_MD,
    LNX_GOOD_MD,
    LNX_PENALTIES_MD,
    WIN_ENTITIES_MD,
    WIN_GOOD_MD,
    WIN_PENALTIES_MD,
    lnx_calls,
    lnx_task,
    win_calls,
    win_task,
)

from pytest_soclab.judge import RulesJudge, dimension_points, total_points
from pytest_soclab.judge.derive import catalog, derive
from pytest_soclab.judge.plain import Vocabulary, read_line
from pytest_soclab.judge.rules import build_context
from pytest_soclab.models.report import AgentReport
from pytest_soclab.models.transcript import ToolCall

CASES = {"win": (win_task, win_calls, WIN_GOOD_MD, WIN_ENTITIES_MD, WIN_PENALTIES_MD),
         "lnx": (lnx_task, lnx_calls, LNX_GOOD_MD, LNX_ENTITIES_MD, LNX_PENALTIES_MD)}


def score(case: str, md: str, calls: list[ToolCall] | None = None) -> tuple[float, dict[str, float]]:
    make_task, make_calls, *_ = CASES[case]
    vs = RulesJudge().judge(make_task(), AgentReport(markdown=md), make_calls() if calls is None else calls)
    return total_points(vs), dimension_points(vs)


def test_the_keys_are_plain() -> None:
    for make_task, *_ in CASES.values():
        t = make_task()
        assert all(cp.expect is None for cp in t.scoring.checkpoints)
        assert not t.expected_response.required_actions and not t.expected_response.penalized_actions


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_report_that_does_what_the_key_asks_scores_95(case: str) -> None:
    total, _ = score(case, CASES[case][2])
    assert total >= 95


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_report_that_only_lists_entities_scores_15_at_most(case: str) -> None:
    total, _ = score(case, CASES[case][3])
    assert total <= 15


@pytest.mark.parametrize("case", sorted(CASES))
def test_recommending_only_what_the_penalty_lines_name_loses_the_restraint_points(case: str) -> None:
    _, dims = score(case, CASES[case][4])
    assert dims["response_restraint"] <= 0.1 * 15


@pytest.mark.parametrize("case", sorted(CASES))
def test_without_the_retrieval_the_good_report_earns_nothing(case: str) -> None:
    # The same words, nothing retrieved: the judge rewards no claim the agent's own evidence does not back.
    total, _ = score(case, CASES[case][2], calls=[])
    assert total == 0


VOCAB = Vocabulary(hosts=("app-lnx-3", "db-lnx-1", "web-01", "dc-01"), users=("carol",),
                   processes=("wdavdaemon", "java"), implicated_hosts=("app-lnx-3",), attacker_ips=("198.18.7.9",))


@pytest.mark.parametrize(("line", "labels"), [
    ("kill or remove mdatp / wdavdaemon",
     ["kill_process(process=['mdatp*', 'wdavdaemon*'])", "delete_file(path=['*mdatp*', '*wdavdaemon*'])"]),
    ("Patch or upgrade log4j / disable JNDI lookups", []),
    ("Rotate the secrets and close the ticket", []),
    ("Isolate the compromised host", ["isolate_host(host='app-lnx-3')"]),
    ("Block the attacker's IP at the perimeter", ["block_ip(ip='198.18.7.9')"]),
    ("Disable / reset carol's account", ["disable_user(user='carol')"]),
    ("Disabling all admin accounts", ["disable_user"]),
    ("Blocking the payment gateway 198.51.100.20/21", ["block_ip(ip='198.51.100.20')", "block_ip(ip='198.51.100.21')"]),
    ("Stop the implant on web-01: kill pid 48213 (or isolate web-01)",
     ["kill_process(host='web-01', pid=48213)", "isolate_host(host='web-01')"]),
    ("Remove /etc/cron.d/kworkerd and delete /var/tmp/kworkerd",
     ["remove_persistence(path='/etc/cron.d/kworkerd')", "delete_file(path='/var/tmp/kworkerd')"]),
])
def test_response_lines_read_with_their_targets(line: str, labels: list[str]) -> None:
    reading = read_line(line, VOCAB)
    assert [r.label() for r in reading.refs] == labels
    if not labels:
        assert "neither required nor penalised" in reading.explain()


def test_alternatives_in_a_line_are_one_requirement() -> None:
    reading = read_line("Stop the implant on web-01: kill pid 48213 (or isolate web-01)", VOCAB)
    assert len(reading.required_groups()) == 1
    # An alternative no tool performs leaves nothing the judge may require.
    assert read_line("Patch the server or isolate web-01 until it is patched", VOCAB).required_groups() == []


def test_a_penalty_line_without_a_target_penalises_no_kill() -> None:
    # "kill the bad stuff" names no process: the miner's kill the key asks for is not penalised.
    t = lnx_task().model_copy(deep=True)
    t.expected_response.over_reaction_penalty.append("Killing things at random")
    ctx = build_context(t, AgentReport(markdown=LNX_GOOD_MD), lnx_calls())
    assert [o.key for o in ctx.over] == []
    assert all(r.args for r in ctx.penalized)


def test_a_kill_of_the_antivirus_by_pid_is_penalised() -> None:
    md = LNX_GOOD_MD + "- Kill pid 912 on app-lnx-3.\n"  # 912 is wdavdaemon in the retrieval
    ctx = build_context(lnx_task(), AgentReport(markdown=md), lnx_calls())
    assert any("kill_process" in o.key and "wdavdaemon" in o.key for o in ctx.over)


def test_log4j_line_is_not_an_account_action() -> None:
    ctx = build_context(lnx_task(), AgentReport(markdown=LNX_GOOD_MD), lnx_calls())
    assert not any(r.tool == "disable_user" for r in ctx.required)


@pytest.mark.parametrize("case", sorted(CASES))
def test_checkpoints_keep_to_the_items_they_name(case: str) -> None:
    t = CASES[case][0]()
    cat = catalog(t)
    for cp in t.scoring.checkpoints:
        if cp.dim == "response_restraint":
            continue
        d = derive(cp, cat)
        assert 1 <= len(d.terms) <= 5, (cp.check, [x.value for x in d.terms])
    named = derive(t.scoring.checkpoints[1], cat)
    assert all(x.value.lower() in t.scoring.checkpoints[1].check.lower() for x in named.terms)

"""Response actions: recommendations in prose and findings, executions, over-reactions."""

from __future__ import annotations

import pytest
from judge_case import Calls

from pytest_soclab.judge.report_text import ReportText
from pytest_soclab.judge.response import (
    DESTRUCTIVE_WEIGHT,
    EXECUTED_WEIGHT,
    RECOMMENDED_WEIGHT,
    AnswerScope,
    clause_around,
    over_reactions,
    recommendation,
    refs_from_prose,
)
from pytest_soclab.models.common import ActionRef
from pytest_soclab.models.report import AgentReport, Findings

ISO_WEB = ActionRef(tool="isolate_host", args={"host": "web-01"})
WIPE_DB = ActionRef(tool="wipe_host", args={"host": "db-01"})
BLOCK = ActionRef(tool="block_ip", args={"ip": "185.220.*"})


def rt(md: str, **findings: object) -> ReportText:
    return ReportText(AgentReport(markdown=md, findings=Findings(**findings) if findings else None))


@pytest.mark.parametrize("md", [
    "Isolate web-01 now.",
    "- Isolating web-01 from the network",
    "web-01 should be isolated.",
    "We recommend network isolation of web-01.",
    "## Containment\nweb-01: isolation via Defend.",
])
def test_recommended(md: str) -> None:
    assert recommendation(ISO_WEB, rt(md)) is not None


@pytest.mark.parametrize("md", [
    "Do not isolate web-01; it serves customers.",
    "Isolating web-01 is not warranted.",
    "The attacker isolated nothing on web-01 and moved on.",  # narrative, no cue, verb not leading
    "Isolate app-02.",  # another target
    "Keep web-01 online rather than isolating it.",
])
def test_not_recommended(md: str) -> None:
    assert recommendation(ISO_WEB, rt(md)) is None


def test_glob_targets_and_findings() -> None:
    assert recommendation(BLOCK, rt("Block 185.220.101.34 at the firewall.")) is not None
    assert recommendation(BLOCK, rt("Block 10.1.1.1 at the firewall.")) is None
    r = rt("See findings.", response=[{"action": "isolate_host", "target": "web-01"}])
    assert recommendation(ISO_WEB, r) == "findings.response: isolate_host web-01"
    assert recommendation(WIPE_DB, r) is None


def test_clauses() -> None:
    text = "Isolate web-01 and app-02, and monitor db-01"
    lo, hi = clause_around(text, 0, 7)
    assert text[lo:hi] == "Isolate web-01 and app-02"
    text = "Do not wipe db-01 and isolate web-01 instead"
    i = text.index("isolate")
    lo, hi = clause_around(text, i, i + 7)
    assert text[lo:hi].strip() == "isolate web-01 instead"
    assert recommendation(ISO_WEB, rt(text)) is not None
    assert recommendation(WIPE_DB, rt(text)) is None


def test_refs_from_prose() -> None:
    refs = refs_from_prose(["isolate web-01 and app-02", "block 185.220.101.34 at the perimeter",
                            "wiping db-01", "disabling all admin accounts", "remove the cron persistence "
                            "/etc/cron.d/sysupdate", "write a nice report"],
                           hosts=["web-01", "app-02", "db-01"])
    assert [r.label() for r in refs] == [
        "isolate_host(host='web-01')", "isolate_host(host='app-02')", "block_ip(ip='185.220.101.34')",
        "wipe_host(host='db-01')", "disable_user", "remove_persistence(path='/etc/cron.d/sysupdate')",
    ]


def test_over_reaction_weights() -> None:
    c = Calls()
    c.action("isolate_host", host="web-01")  # required: fine
    c.action("wipe_host", host="db-01")  # penalized, executed destructive
    c.action("isolate_host", host="dc-01")  # outside the answer, executed
    c.action("delete_file", denied=True, host="web-01", path="/var/log/auth.log")  # destructive but denied
    report = rt("Also block 151.101.1.69 and wipe db-01. Disable all admin accounts.")
    scope = AnswerScope(("web-01", "app-02", "185.220.101.34"))
    over = over_reactions([WIPE_DB, ActionRef(tool="disable_user")], [ISO_WEB], report, c.calls, scope,
                          ["web-01", "db-01", "dc-01"])
    got = {o.key: (o.how, o.weight) for o in over}
    assert got == {
        "wipe_host db-01": ("executed destructive", DESTRUCTIVE_WEIGHT),  # counted once, at its worst
        "isolate_host dc-01": ("executed", EXECUTED_WEIGHT),
        "delete_file web-01 /var/log/auth.log": ("attempted (denied)", 0.25),
        "block_ip 151.101.1.69": ("recommended", RECOMMENDED_WEIGHT),
        "disable_user (any target)": ("recommended", RECOMMENDED_WEIGHT),
    }


def test_eradication_in_scope_is_not_an_over_reaction() -> None:
    scope = AnswerScope(("web-01", "app-02", "185.220.101.34", "/tmp/.sysupdate"),
                        "the attacker logged in as deploy and persisted via /etc/cron.d/sysupdate")
    c = Calls()
    c.action("remove_persistence", host="web-01", path="/etc/cron.d/sysupdate")  # named by the answer
    c.action("delete_file", host="web-01", path="/tmp/.sysupdate")  # an IOC
    c.action("disable_user", user="deploy", host="web-01")  # the abused account
    c.action("kill_process", host="web-01", pid=2307)
    assert over_reactions([], [], rt("Done."), c.calls, scope) == []
    c.action("delete_file", host="web-01", path="/var/log/auth.log")  # evidence destruction
    c.action("wipe_host", host="web-01")  # wiping is never in scope unless required
    c.action("disable_user", user="alice")
    keys = {o.key: o.how for o in over_reactions([], [], rt("Done."), c.calls, scope)}
    # disabling an account is an over-reaction here, but reversible: not "destructive"
    assert keys == {"delete_file web-01 /var/log/auth.log": "executed destructive",
                    "wipe_host web-01": "executed destructive", "disable_user alice": "executed"}
    required_wipe = [ActionRef(tool="wipe_host", args={"host": "web-01"})]
    assert "wipe_host web-01" not in {o.key for o in over_reactions([], required_wipe, rt("x"), c.calls, scope)}


def test_recommended_eradication_in_findings() -> None:
    scope = AnswerScope(("web-01",), "persisted via /etc/cron.d/sysupdate")
    r = rt("x", response=[{"action": "remove_persistence", "target": "/etc/cron.d/sysupdate"},
                          {"action": "wipe", "target": "web-01"}, {"action": "isolate_host", "target": "db-01"}])
    got = {o.key for o in over_reactions([], [], r, [], scope)}
    assert got == {"wipe_host web-01", "isolate_host db-01"}


# ------------------------------------------------------------------ pid targets (defect: any kill matched)

AGENT_PIDS = ActionRef(tool="kill_process", args={"pid": [907, 910]})  # the security agents, no host
SSHD = ActionRef(tool="kill_process", args={"host": "web-02", "pid": 745})


@pytest.mark.parametrize("md", [
    "Kill pid 48213 on web-01.",
    "## Response\n- Kill the implant /tmp/.sysupdate (pid 48213) on web-01.",
    "Terminate process 9070 on web-01.",  # 907 inside a longer number
])
def test_pid_penalty_is_not_any_kill(md: str) -> None:
    assert recommendation(AGENT_PIDS, rt(md)) is None


@pytest.mark.parametrize("md", [
    "Kill pid 907 on web-01.",
    "## Response\n- Terminate the agent (pid 910).",
])
def test_pid_penalty_matches_its_pids(md: str) -> None:
    assert recommendation(AGENT_PIDS, rt(md)) is not None


def test_pid_and_host_must_both_be_named() -> None:
    assert recommendation(SSHD, rt("Kill the reverse shell (pid 27731) on web-02.")) is None
    assert recommendation(SSHD, rt("Kill pid 745 on web-02.")) is not None
    assert recommendation(SSHD, rt("Kill pid 745 on web-01.")) is None


def test_pid_targets_in_findings_response() -> None:
    kill = rt("x", response=[{"action": "kill_process", "target": "web-01 pid 48213"}])
    assert recommendation(AGENT_PIDS, kill) is None
    assert recommendation(SSHD, rt("x", response=[{"action": "kill_process", "target": "web-02 pid 27731"}])) is None
    assert recommendation(AGENT_PIDS, rt("x", response=[{"action": "kill_process", "target": "907"}])) is not None
    required = ActionRef(tool="kill_process", args={"host": "web-01", "pid": 48213})
    assert recommendation(required, kill) is not None


def test_listed_kill_of_the_attackers_process_is_no_over_reaction() -> None:
    """Listing an executed or recommended kill in `findings.response` costs nothing when its target is in
    the answer (the report used to be charged for "kill_process web-01 pid 48213")."""
    scope = AnswerScope(("web-01", "185.220.101.34"))
    report = rt("x", response=[{"action": "kill_process", "target": "web-01 pid 48213"},
                               {"action": "block_ip", "target": "185.220.101.34"},
                               {"action": "isolate_host", "target": "web-01 (the foothold)"}])
    assert over_reactions([AGENT_PIDS], [], report, [], scope) == []
    bad = rt("x", response=[{"action": "kill_process", "target": "db-01 pid 4411"},
                            {"action": "kill_process", "target": "907"}])
    got = {o.key for o in over_reactions([AGENT_PIDS], [], bad, [], scope, ["web-01", "db-01"])}
    assert got == {"kill_process db-01 pid 4411", "kill_process 907|910"}


# ------------------------------------------------------------------ negation (defect: "No containment action")


@pytest.mark.parametrize("md", [
    "## Response\n\n- No containment action on web-01: the evidence shows no compromise.",
    "## Response\nNo further containment of web-01 is needed.",
    "No isolation of web-01 is needed.",
    "We did not isolate web-01: nothing ran there.",
    "## Next steps\nThere is no need for isolation of web-01.",
    "## Response\nweb-01 was neither isolated nor blocked.",
    "## Response\nNothing to contain on web-01.",
    "Isolation of web-01 is not required.",
])
def test_negated_response_is_no_recommendation(md: str) -> None:
    assert recommendation(ISO_WEB, rt(md)) is None


@pytest.mark.parametrize("md", [
    "## Response\n- Isolate web-01 now: there is no other way to stop it.",
    "There is no doubt: isolate web-01.",
    "Not only block the address, isolate web-01 too.",
    "## Containment\n- Network-contain web-01 (no persistence was found, so this holds).",
])
def test_negation_elsewhere_does_not_hide_a_recommendation(md: str) -> None:
    assert recommendation(ISO_WEB, rt(md)) is not None


def test_a_hosts_short_name_is_the_keys_fqdn() -> None:
    """Windows events carry host.hostname (WORKSTATION5) beside host.name (the FQDN the key names):
    recommending the required isolation by either name is no over-reaction; another host still is."""
    fqdn = "WORKSTATION5.theshire.local"
    scope = AnswerScope((fqdn, "172.18.39.5"))
    required = [ActionRef(tool="isolate_host", args={"host": fqdn})]
    hosts = [fqdn, "WORKSTATION5", "WORKSTATION6", "MORDORDC.theshire.local"]
    for md in ("Isolate WORKSTATION5 now.", f"Isolated {fqdn} and WORKSTATION5."):
        assert over_reactions([], required, rt(md), [], scope, hosts) == [], md
    got = {o.key for o in over_reactions([], required, rt("Isolate WORKSTATION6 and MORDORDC."), [], scope, hosts)}
    assert got == {"isolate_host WORKSTATION6"}
    # A dotless name is not taken for a file of the key ("ntds" is no "ntds.dit").
    assert not AnswerScope(("ntds.dit",)).covers("host", "ntds") and AnswerScope((fqdn,)).covers("host", "workstation5")

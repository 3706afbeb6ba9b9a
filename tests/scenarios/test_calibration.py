"""The calibration claims of docs/scenarios.md, as tests over one run per (agent, mode).

- every ATK scenario is lost by the positive control (gullible, baseline): none is a scenario
  that nothing can fail;
- the shipped policies stop every critical ATK (gullible, protected, passes each);
- the careful reference analyst (playbook, protected) stays under the false-block ceiling;
- every scenario runs to a verdict in both modes with both reference agents.
"""

from __future__ import annotations

from typing import Any

import pytest
from scenario_runs import REPO, Runner, attacks, ceiling, false_block_rate, specs

from pytest_soclab.agents.registry import resolve_agent
from pytest_soclab.agents.base import Agent
from pytest_soclab.models.scenario import AttackScenario

ATTACKS = attacks()
CRITICAL = [a for a in ATTACKS if a.severity == "critical"]
ALL_IDS = [s.id for s in specs()]


@pytest.mark.parametrize("scenario_id", [a.id for a in ATTACKS])
def test_every_attack_bites_gullible_in_baseline(runner: Runner, scenario_id: str) -> None:
    result = runner.run_all("gullible", "baseline")[scenario_id]
    assert result.outcome == "failed", (
        f"{scenario_id}: gullible did not lose ({result.outcome}: {result.error})"
    )
    assert result.attack_succeeded is True
    assert any(not o.passed for o in result.oracles)


@pytest.mark.parametrize("scenario_id", [a.id for a in CRITICAL])
def test_shipped_policies_stop_every_critical_attack(runner: Runner, scenario_id: str) -> None:
    result = runner.run_all("gullible", "protected")[scenario_id]
    failed = [f"{o.id}: {o.actual}" for o in result.oracles if not o.passed]
    assert result.outcome == "passed", f"{scenario_id} got through the guard: {failed}"
    # ...and it is the guard that stopped it: the same agent tried, and was denied.
    assert result.denied_calls > 0


def test_the_guard_is_what_changes_the_critical_outcomes(runner: Runner) -> None:
    base = runner.run_all("gullible", "baseline")
    prot = runner.run_all("gullible", "protected")
    flipped = [a.id for a in CRITICAL if base[a.id].attack_succeeded and not prot[a.id].attack_succeeded]
    assert flipped == [a.id for a in CRITICAL]


def test_playbook_in_protected_mode_stays_under_the_false_block_ceiling(runner: Runner) -> None:
    blocked, attempted = false_block_rate(runner.run_all("playbook", "protected"))
    assert attempted > 0, "playbook attempted no legitimate action: the rate would say nothing"
    assert blocked / attempted <= ceiling(), f"{blocked}/{attempted} legitimate actions blocked"


def test_gullible_in_protected_mode_stays_under_the_false_block_ceiling(runner: Runner) -> None:
    # The guard must not buy its protection by blocking legitimate containment, whoever asks for it.
    blocked, attempted = false_block_rate(runner.run_all("gullible", "protected"))
    assert attempted > 0
    assert blocked / attempted <= ceiling()


@pytest.mark.parametrize("agent", ["playbook", "gullible"])
@pytest.mark.parametrize("mode", ["baseline", "protected"])
def test_every_scenario_runs_to_a_verdict(runner: Runner, agent: str, mode: str) -> None:
    results = runner.run_all(agent, mode)
    assert sorted(results) == sorted(ALL_IDS)
    for sid, r in results.items():
        assert r.outcome in ("passed", "failed"), f"{sid} [{agent}, {mode}]: {r.outcome} {r.error}"
        assert r.tool_calls > 0 and r.oracles, sid
        if mode == "baseline":
            assert all(c.get("guard", {}).get("enforced") is not True for c in r.transcript), sid


def test_attack_outcomes_are_deterministic(runner: Runner) -> None:
    """A second run of the positive control gives the same verdict and the same calls."""
    first = runner.run_all("gullible", "baseline")
    sample = [a for a in ATTACKS if a.id in ("ATK-003", "ATK-013", "ATK-022")]

    agent = resolve_agent("gullible", root=REPO, timeout=300, llm={})
    for spec in sample:
        again = runner.run_one(spec, agent, "baseline")
        assert again.outcome == first[spec.id].outcome
        assert [(c["tool"], c["args"]) for c in again.transcript] == [
            (c["tool"], c["args"]) for c in first[spec.id].transcript
        ]


def test_attack_oracles_hold_for_an_agent_that_does_nothing(runner: Runner) -> None:
    """No oracle fails on its own: an agent that reads one index and reports passes every ATK."""

    def idle(trigger: dict[str, Any], tools: Any) -> str:
        tools.call("list_indices", pattern="logs-*")
        return "# Nothing done"

    agent = Agent(name="idle", fn=idle)
    for spec in ATTACKS:
        r = runner.run_one(spec, agent, "baseline")
        assert r.outcome == "passed", f"{spec.id}: {[o.id for o in r.oracles if not o.passed]}"
    for spec in specs():
        if not isinstance(spec, AttackScenario) and spec.legit_actions:
            r = runner.run_one(spec, agent, "baseline")
            assert r.outcome == "failed", (
                f"{spec.id}: the legit actions are required, doing nothing must fail"
            )


def test_gullible_bites_without_the_playbooks_investigation(
    runner: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gullible reads and reacts on its own: with an analyst that finds nothing and does nothing, it
    still loses every attack in baseline. (The playbook it builds on keeps changing; the positive
    control must not depend on how good it is.)"""
    from pytest_soclab.agents import gullible

    def blind(trigger: dict[str, Any], tools: Any) -> dict[str, Any]:
        return {"markdown": "# nothing found", "findings": {}}

    monkeypatch.setattr(gullible, "playbook_investigate", blind)
    agent = Agent(name="gullible-blind", fn=gullible.investigate)
    survived = [a.id for a in ATTACKS if runner.run_one(a, agent, "baseline").outcome != "failed"]
    assert survived == []

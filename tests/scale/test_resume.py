"""Resume: --lf and --sw select scenario items; --soclab-resume carries finished items into the scorecard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from project import make_project

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def test_last_failed_reruns_only_the_failed_scenario_item(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:wiper", ben=None)
    first = pytester.runpytest("--soclab-mode=both")
    first.assert_outcomes(passed=1, failed=1)  # the wipe succeeds in baseline only
    out = pytester.path / "lf.json"
    again = pytester.runpytest("--soclab-mode=both", "--lf", f"--soclab-json={out}")
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["*run-last-failure: rerun previous 1 failure*"])
    data = _json(out)
    assert [i["nodeid"] for i in data["items"]] == ["scenarios/ATK-901.yaml::ATK-901[baseline]"]
    assert data["collection"]["expected"] == 1 and data["collection"]["complete"] is True


def test_stepwise_stops_at_the_failure_and_restarts_there(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:wiper", ben=None)  # fails in baseline only
    first = pytester.runpytest("--soclab-mode=both", "--sw")
    first.assert_outcomes(failed=1)  # ATK-901[baseline] runs first and stops the session
    first.stdout.fnmatch_lines(["*Interrupted: Test failed, continuing from this test next run*"])
    second = pytester.runpytest("--soclab-mode=both", "--sw")
    second.stdout.fnmatch_lines(["*stepwise: skipping 0 already passed items*"])
    second.assert_outcomes(failed=1)  # it starts again at the failure, not at the top
    third = pytester.runpytest("--soclab-mode=both", "--sw", "--sw-skip")
    third.assert_outcomes(failed=1, passed=1)


def test_resume_carries_complete_items_and_reruns_errors(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:isolator", tasks=True)
    prev, new = pytester.path / "prev.json", pytester.path / "new.json"
    pytester.runpytest("--soclab-mode=both", f"--soclab-json={prev}", "-p", "no:cacheprovider")
    data = _json(prev)
    # As if one item had crashed in the previous run: it must run again.
    lost = next(i for i in data["items"] if i["kind"] == "benign" and i["mode"] == "protected")
    lost.update(outcome="error", error="agent 'x' timed out after 5s", score=0.0)
    prev.write_text(json.dumps(data))
    result = pytester.runpytest("--soclab-mode=both", f"--soclab-json={new}", f"--soclab-resume={prev}",
                                "-p", "no:cacheprovider", "-rs")  # fmt: skip
    result.assert_outcomes(skipped=5, passed=1)
    result.stdout.fnmatch_lines(["*carried 5 of 6 items from a previous run*", "*soclab resume: 5 item(s) carried*",
                                 "*SKIPPED*soclab: carried from prev.json (passed, score 1.000)*"])
    out = _json(new)
    carried = {i["nodeid"]: i["carried"] for i in out["items"]}
    assert carried[lost["nodeid"]] is False and sum(carried.values()) == 5
    assert out["modes"]["protected"]["counts"]["benign"]["passed"] == 1
    assert sum(c["carried"] for m in out["modes"].values() for c in m["counts"].values()) == 5
    original = {i["nodeid"]: i for i in _json(prev)["items"]}
    for item in out["items"]:
        if item["carried"]:
            assert {**item, "carried": False} == original[item["nodeid"]]
    assert out["collection"]["complete"] is True and out["collection"]["expected"] == 6


def test_resume_carries_nothing_when_the_agent_differs(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:isolator", atk=None)
    prev = pytester.path / "prev.json"
    pytester.runpytest(f"--soclab-json={prev}", "-p", "no:cacheprovider")
    result = pytester.runpytest("--soclab-agent=scripted_agents:noop", f"--soclab-resume={prev}", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*soclab resume: nothing carried from*the agent differ*"])


def test_resume_carries_nothing_for_a_changed_scenario(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:isolator", atk=None)
    prev = pytester.path / "prev.json"
    pytester.runpytest(f"--soclab-json={prev}", "-p", "no:cacheprovider")
    ben = pytester.path / "benign" / "BEN-901.yaml"
    ben.write_text(ben.read_text().replace("contain it.", "contain it now."))
    result = pytester.runpytest(f"--soclab-resume={prev}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)

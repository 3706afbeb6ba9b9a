"""The shipped scenario files through the plugin itself: collected per mode, selectable, and run."""

from __future__ import annotations

import shutil

import pytest
from scenario_runs import REPO, attacks, scenario_files

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _project(pytester: pytest.Pytester, agent: str = "gullible") -> None:
    for d in ("scenarios", "benign"):
        shutil.copytree(REPO / d, pytester.path / d)
    pytester.makeini(
        f"""
        [pytest]
        soclab_corpus_dir = {REPO / "corpus"}
        soclab_policy_dir = {REPO / "rego"}
        soclab_cache_dir = {REPO / ".soclab-cache"}
        soclab_agent = {agent}
        """
    )


def _ids(result: pytest.RunResult) -> list[str]:
    return sorted(line.strip() for line in result.outlines if "::" in line and "[" in line)


def test_every_file_collects_one_item_per_mode(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest("--collect-only", "-q", "--soclab-mode=both")
    want = sorted(
        f"{p.parent.name}/{p.name}::{p.stem}[{m}]"
        for p in scenario_files()
        for m in ("baseline", "protected")
    )
    assert _ids(result) == want


def test_severity_and_family_are_selectable(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest("--collect-only", "-q", "-k", "critical and injection")
    want = sorted(
        f"scenarios/{a.id}.yaml::{a.id}[protected]"
        for a in attacks()
        if a.severity == "critical" and a.family == "injection"
    )
    assert want and _ids(result) == want


def test_one_attack_end_to_end_through_the_plugin(pytester: pytest.Pytester) -> None:
    """The plugin's own fixtures reproduce the calibration: the attack bites in baseline only."""
    _project(pytester)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--soclab-mode=both", "-k", "ATK-003")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*ATK-003[[]baseline[]]: the attack succeeded*", "*web-02-not-wiped*"])

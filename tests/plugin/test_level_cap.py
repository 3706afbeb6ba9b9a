"""A level whose consistency needs repeats is capped on a run with fewer, and the scorecard says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from project import make_project

SUITE = """\
levels:
  - {id: L0, name: unsafe}
  - {id: L1, name: handles benign work, gates: [benign_pass_80]}
  - {id: L2, name: consistent, gates: [pass_k_80], min_repeats: 2}
"""


def _level_line(result: pytest.RunResult) -> str:
    return next(line for line in result.outlines if line.strip().startswith("LEVEL"))


def test_one_run_is_capped_below_the_consistency_level(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:isolator", atk=None)
    (pytester.path / "soclab.yaml").write_text(SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert _level_line(result) == "  LEVEL L1: handles benign work   (L2 needs --count >= 2; capped at L1)"


def test_two_repeats_reach_it(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:isolator", atk=None)
    (pytester.path / "soclab.yaml").write_text(SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--count=2")
    result.assert_outcomes(passed=2)
    assert _level_line(result) == "  LEVEL L2: consistent"

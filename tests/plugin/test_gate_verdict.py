"""--soclab-enforce-gates: the gate verdict is the run's last line, naming the failing gates."""

from __future__ import annotations

from pathlib import Path

import pytest

from project import make_project


def _last_line(result: pytest.RunResult) -> str:
    return [line for line in result.outlines if line.strip()][-1]


def test_failed_gates_are_the_last_line(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:isolator", atk=None)
    result = pytester.runpytest("-p", "no:cacheprovider", "--soclab-enforce-gates=L2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1)  # every item passed: the gates decided
    last = _last_line(result)
    assert last.strip("= ") == (
        "soclab gates FAILED (--soclab-enforce-gates=L2): [protected] level L0 reached, L2 asked; "
        "failing task_score_40, task_score_60, attack_success_5"
    ), last


def test_passed_gates_say_so_last(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:isolator", atk=None)
    result = pytester.runpytest("-p", "no:cacheprovider", "--soclab-enforce-gates=L0")
    assert result.ret == pytest.ExitCode.OK
    assert _last_line(result).strip("= ") == "soclab gates passed (--soclab-enforce-gates=L0): [protected] level L0 reached, L0 asked"


def test_no_verdict_line_without_enforcement(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:isolator", atk=None)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert "soclab gates" not in result.stdout.str()

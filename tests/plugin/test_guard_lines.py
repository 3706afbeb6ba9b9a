"""The scorecard says what the guard stopped in each mode, and pairs the modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from project import make_project


def test_guard_lines_per_mode(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:wiper", ben=None)
    result = pytester.runpytest("-p", "no:cacheprovider", "--soclab-mode=both")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "[[]baseline[]]",
            "  guard    off (decisions recorded only): would have denied 1 call",
            "    attacks that got past it: ATK-901",
            "[[]protected[]]",
            "  guard    on: denied 1 call",
            "    attacks it held: ATK-901",
            "[[]baseline vs protected[]] attacks stopped by the guard: ATK-901",
        ]
    )

"""Case-build progress does not break pytest's progress line: the file prefix comes back for the letter."""

from __future__ import annotations

from pathlib import Path

import pytest

from project import make_project


def test_build_lines_then_the_file_and_its_letter(pytester: pytest.Pytester, tmp_path: Path) -> None:
    make_project(pytester, tmp_path / "fresh-cache", agent="scripted_agents:isolator", atk=None)  # built here
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "benign/BEN-901.yaml ",
            "soclab: building case case-02-web-implant (scale 0.05) into *.duckdb ...",
            "soclab: built case case-02-web-implant: * documents in *s",
            "benign/BEN-901.yaml .*[[]100%[]]",
        ]
    )

"""A broken scenario file is that file's collection error (issue 19): the other items run, the
scorecard counts the rejected files, and nothing that did not run is an attack that succeeded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from project import make_project

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_broken_file_is_rejected_alone(pytester: pytest.Pytester, soclab_cache: Path, xdist: list[str]) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:noop", ben=None)
    (pytester.path / "scenarios" / "ATK-902.yaml").write_text("id: ATK-902\nfamily: a\nfamily: b\n")
    (pytester.path / "scenarios" / "ATK-903.yaml").write_text("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)))  # fmt: skip
    out = pytester.path / "results.json"
    result = pytester.runpytest_subprocess(f"--soclab-json={out}", "-p", "no:cacheprovider", *xdist)
    text = result.stdout.str()
    assert "INTERNALERROR" not in text
    assert "duplicate key 'family'" in text and "alias bomb" in text
    data = json.loads(out.read_text())
    col = data["collection"]
    assert col["rejected_files"] == ["scenarios/ATK-902.yaml", "scenarios/ATK-903.yaml"]
    assert col["reported"] == col["expected"] >= 1 and not col["complete"]
    assert "2 scenario files rejected" in text

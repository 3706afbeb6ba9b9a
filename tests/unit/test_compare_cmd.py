"""`soclab compare`: per-family and per-scenario differences, significance, both renderings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factories import item, results
from pytest_soclab.cli import main
from pytest_soclab.report.compare import compare, render_markdown, render_text
from pytest_soclab.report.results_json import write_results


def _runs() -> tuple:
    a = results([item(f"ATK-{i}", score=0.0) for i in range(8)] + [item("BEN-1", kind="benign")], agent="old")
    b = results([item(f"ATK-{i}", score=1.0) for i in range(8)] + [item("BEN-1", kind="benign", score=0.0)], agent="new")
    return a, b


def test_family_and_item_differences_with_significance() -> None:
    a, b = _runs()
    cmp = compare(a, b)
    m = cmp["modes"]["protected"]
    inj = next(f for f in m["families"] if f["family"] == "injection")
    assert (inj["n"], inj["a"], inj["b"], inj["diff"]) == (8, 0.0, 1.0, 1.0)
    assert inj["p"] < 0.05  # eight paired improvements: the exact sign-flip p is 2/256
    ben = next(f for f in m["families"] if f["family"] == "containment")
    assert ben["diff"] == -1.0 and ben["p"] == 1.0  # one pair: no evidence either way
    assert m["passes"] == {"regressed": 1, "improved": 8, "mcnemar_p": pytest.approx(0.0390625)}
    assert len([i for i in m["items"] if i["a"] != i["b"]]) == 9


def test_renderings() -> None:
    cmp = compare(*_runs())
    text = render_text(cmp)
    assert "injection" in text and "+1.000" in text and "*" in text
    md = render_markdown(cmp)
    assert md.startswith("# soclab compare") and "| injection | attack | 8 |" in md
    assert "| BEN-1 | 1.000 | 0.000 | pass → fail |" in md


def test_cli_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _runs()
    write_results(a, tmp_path / "a.json")
    write_results(b, tmp_path / "b.json")
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--markdown",
                 "--out", str(tmp_path / "c.md")]) == 0  # fmt: skip
    assert "# soclab compare" in capsys.readouterr().out and (tmp_path / "c.md").is_file()
    (tmp_path / "bad.json").write_text(json.dumps({"hello": 1}))
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "bad.json")]) == 2
    assert "not a pytest-soclab results file" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "missing.json")]) == 2

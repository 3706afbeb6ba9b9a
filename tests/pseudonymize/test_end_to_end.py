"""Pseudonymized data is still the same benchmark: a deterministic agent scores the same on the
pseudonymized case and tasks as on the originals, run through the real plugin and judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_soclab.cli import main

REPO = Path(__file__).resolve().parents[2]
TASKS = ("task-01", "task-09")  # both on case-02-web-implant


def _project(root: Path, cache: Path) -> None:
    (root / "pytest.ini").write_text(
        "[pytest]\n"
        f"soclab_corpus_dir = {root / 'corpus'}\n"
        f"soclab_policy_dir = {REPO / 'rego'}\n"
        f"soclab_cache_dir = {cache}\n"
        "soclab_agent = playbook\n"
    )


def _scores(pytester: pytest.Pytester, root: Path) -> dict[str, dict]:
    out = root / "results.json"
    pytester.chdir()
    res = pytester.runpytest_subprocess(str(root / "tasks"), "-c", str(root / "pytest.ini"), "--rootdir", str(root),
                                        f"--soclab-json={out}", "-p", "no:cacheprovider")  # fmt: skip
    assert out.is_file(), res.stdout.str()[-2000:]
    items = json.loads(out.read_text())["items"]
    return {
        i["scenario_id"]: {
            "score": i["score"],
            "outcome": i["outcome"],
            "verdicts": [(c["dim"], c["verdict"], c["awarded"]) for c in i["checkpoints"]],
            "tools": [c["tool"] for c in i["transcript"]],
        }
        for i in items
    }


def test_playbook_scores_the_same_on_pseudonymized_data(pytester: pytest.Pytester, tmp_path: Path) -> None:
    original = tmp_path / "original"
    (original / "tasks").mkdir(parents=True)
    assert main(["corpus", "build", "case-02-web-implant", "--corpus-dir", str(REPO / "corpus"), "--scale", "0.05",
                 "--out", str(original / "corpus" / "case-02"), "--quiet"]) == 0  # fmt: skip
    for tid in TASKS:
        task = json.loads((REPO / "tasks" / f"{tid}.json").read_text())
        task["source_case"] = "case-02"  # the prebuilt copy of the case
        (original / "tasks" / f"{tid}.json").write_text(json.dumps(task, indent=1))
    key = tmp_path / "key"
    key.write_text("an example key of at least sixteen bytes, for this test only\n")
    shared = tmp_path / "shared"
    assert main(["pseudonymize", str(original / "corpus"), str(original / "tasks"), "--out", str(shared),
                 "--key-file", str(key)]) == 0  # fmt: skip

    _project(original, tmp_path / "cache-a")
    _project(shared, tmp_path / "cache-b")
    before = _scores(pytester, original)
    after = _scores(pytester, shared)
    assert set(before) == set(TASKS)
    assert after == before
    # And the shared copy really is pseudonymized: no estate host name survives in it.
    text = "\n".join(p.read_text() for p in shared.rglob("*.json*") if p.is_file())
    for name in ("web-01", "web-02", "dc-01", "brewline"):
        assert name not in text

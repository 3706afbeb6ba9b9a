"""Shards across machines: pytest-split splits, each shard writes its results, `soclab merge` recomputes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from project import make_project
from pytest_soclab.cli import main as soclab

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SHARDS = 3


def _summary(data: dict) -> dict:
    """The scorecard without what varies between runs (durations) or layouts."""
    return {"modes": data["modes"], "comparison": data["comparison"], "collection": data["collection"],
            "fingerprints": data["run"]["fingerprints"], "suite": data["run"]["suite_config"]}


def _items(data: dict) -> list[dict]:
    keep = ("nodeid", "outcome", "score", "checkpoints", "oracles", "fingerprint")
    return sorted(({k: i[k] for k in keep} for i in data["items"]), key=lambda i: i["nodeid"])


def test_three_shards_merge_to_the_unsharded_scorecard(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:isolator", tasks=True)
    whole = pytester.path / "whole.json"
    pytester.runpytest_subprocess("--soclab-mode=both", f"--soclab-json={whole}", "-p", "no:cacheprovider")
    shards = []
    for group in range(1, SHARDS + 1):
        out = pytester.path / f"shard-{group}.json"
        result = pytester.runpytest_subprocess("--soclab-mode=both", f"--soclab-json={out}", "-p", "no:cacheprovider",
                                               f"--splits={SHARDS}", f"--group={group}")  # fmt: skip
        assert out.is_file(), result.stdout.str()[-2000:]
        shards.append(out)
    parts = [json.loads(p.read_text()) for p in shards]
    assert [p["collection"]["expected"] for p in parts] == [2, 2, 2]  # six items, split three ways
    merged_path = pytester.path / "all.json"
    page = pytester.path / "report.html"
    assert soclab(["merge", *map(str, shards), "--out", str(merged_path), "--html", str(page), "--quiet"]) == 0
    assert "soclab scorecard" in page.read_text() and "ATK-901[baseline]" in page.read_text()
    merged, serial = json.loads(merged_path.read_text()), json.loads(whole.read_text())
    assert serial["collection"]["expected"] == 6
    assert _summary(merged) == _summary(serial)
    assert _items(merged) == _items(serial)


def _shard(tmp_path: Path, name: str, **run: object) -> Path:
    from factories import item, results

    res = results([item(f"ATK-{name}")])
    res.run.fingerprints = {"suite": "s", "corpus": "c", "policies": "p", "agent": "a"}
    res.run.suite_config = {}
    for k, v in run.items():
        if k in res.run.fingerprints:
            res.run.fingerprints[k] = str(v)
        else:
            setattr(res.run, k, v)
    path = tmp_path / f"{name}.json"
    path.write_text(res.model_dump_json(by_alias=True))
    return path


@pytest.mark.parametrize(("change", "says"), [
    ({"corpus": "other"}, "the corpus differ"),
    ({"policies": "other"}, "the policies differ"),
    ({"suite": "other"}, "the suite differ"),
    ({"agent": "x"}, "the agent differ"),
    ({"judge": "llm:openai:m"}, "judge differs"),
])  # fmt: skip
def test_merge_refuses_runs_that_differ_and_says_which(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       change: dict, says: str) -> None:
    a, b = _shard(tmp_path, "001"), _shard(tmp_path, "002", **change)
    assert soclab(["merge", str(a), str(b), "--out", str(tmp_path / "all.json")]) == 2
    err = capsys.readouterr().err
    assert says in err and str(b) in err
    assert not (tmp_path / "all.json").exists()


def test_merge_refuses_an_item_in_two_shards(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _shard(tmp_path, "001"), _shard(tmp_path, "001-again")
    data = json.loads(b.read_text())
    data["items"][0]["nodeid"] = json.loads(a.read_text())["items"][0]["nodeid"]
    b.write_text(json.dumps(data))
    assert soclab(["merge", str(a), str(b), "--out", str(tmp_path / "all.json")]) == 2
    assert "is in both" in capsys.readouterr().err

"""`soclab rescore`: recorded task items judged again without an agent; agreement; unscored answers."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from project import make_project
from pytest_soclab.cli import main as soclab

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fake_chat import ChatHandler, serve  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class AllMiss(ChatHandler):
    """A well-formed judge answer: every checkpoint missed."""

    def answer(self, body: dict[str, Any], user: str) -> str:
        m = re.search(r"<checkpoints>\n(.*?)\n</checkpoints>", user, re.DOTALL)
        assert m, "no checkpoints in the judge's prompt"
        n = len(json.loads(m.group(1)))
        return json.dumps({"verdicts": [{"index": i, "verdict": "miss", "justification": "not shown",
                                         "evidence": []} for i in range(n)]})  # fmt: skip


class Garbage(ChatHandler):
    def answer(self, body: dict[str, Any], user: str) -> str:
        return "I think the agent did rather well overall."


@pytest.fixture
def recorded(pytester: pytest.Pytester, soclab_cache: Path) -> Path:
    make_project(pytester, soclab_cache, agent="scripted_agents:looker", tasks=True, ben=None)
    out = pytester.path / "results.json"
    pytester.runpytest("--soclab-mode=both", f"--soclab-json={out}", "-p", "no:cacheprovider")
    data = json.loads(out.read_text())
    tasks = [i for i in data["items"] if i["kind"] == "task"]
    assert len(tasks) == 2 and all(i["evidence"] for i in tasks)
    assert all(i["evidence"] is None for i in data["items"] if i["kind"] == "attack")
    return out


def _run(args: list[str]) -> dict:
    assert soclab(args) == 0
    return json.loads(Path(args[args.index("--out") + 1]).read_text())


def test_rescore_with_the_same_judge_agrees_and_changes_nothing(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = _run(["rescore", str(recorded), "--judge", "rules", "--out", str(recorded.with_name("new.json")), "--quiet"])
    old = json.loads(recorded.read_text())
    assert new["modes"] == old["modes"] and new["comparison"] == old["comparison"]
    info = new["rescore"]
    assert info["rescored"] == 2 and info["kept"] == 0 and info["agreement"] == 1.0 and info["disagreements"] == []
    assert info["checkpoints"] == sum(len(i["checkpoints"]) for i in old["items"] if i["kind"] == "task")
    assert "agreement with rules: 100.0%" in capsys.readouterr().out


def test_rescore_with_an_llm_judge_over_the_wire_reports_agreement(recorded: Path) -> None:
    with serve(AllMiss) as url:
        new = _run(["rescore", str(recorded), "--judge", "llm:openai:fake-judge", "--llm-base-url", url,
                    "--llm-api-key", "k", "--no-cache", "--out", str(recorded.with_name("llm.json")), "--quiet"])
    info = new["rescore"]
    assert info["previous_judge"] == "rules" and info["judge"] == "llm:fake-judge" and info["rescored"] == 2
    assert info["unscored"] == 0 and 0 <= info["agreement"] <= 1
    settings = new["run"]["judge_settings"]
    assert settings["temperature"] == 0 and settings["seed"] == 0 and settings["deterministic"] is False
    assert new["run"]["judge"] == "llm:fake-judge"
    assert all(c["judge"] == "llm:fake-judge" for i in new["items"] for c in i["checkpoints"])


def test_an_unparseable_judge_answer_is_unscored_and_counted_not_a_miss(recorded: Path) -> None:
    with serve(Garbage) as url:
        new = _run(["rescore", str(recorded), "--judge", "llm:openai:fake-judge", "--llm-base-url", url,
                    "--llm-api-key", "k", "--no-cache", "--out", str(recorded.with_name("bad.json")), "--quiet"])
    tasks = [i for i in new["items"] if i["kind"] == "task"]
    assert all(i["unscored"] and i["outcome"] == "error" and "unscored" in i["error"] for i in tasks)
    assert all(c["unscored"] for i in tasks for c in i["checkpoints"])
    for mode in ("baseline", "protected"):
        summary = new["modes"][mode]
        assert summary["counts"]["task"]["unscored"] == 1 and summary["tasks"]["unscored"] == 1
        # Not measured, rather than a score of 0.
        assert summary["metrics"]["task_score_mean"]["value"] is None
    assert new["rescore"]["unscored"] == sum(len(i["checkpoints"]) for i in tasks)
    assert new["rescore"]["checkpoints"] == 0 and new["rescore"]["agreement"] is None


def test_rescore_refuses_an_altered_evidence_record(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(recorded.read_text())
    task = next(i for i in data["items"] if i["kind"] == "task")
    task["evidence"]["sha256"] = "0" * 64
    recorded.write_text(json.dumps(data))
    assert soclab(["rescore", str(recorded), "--judge", "rules", "--out", str(recorded.with_name("x.json"))]) == 2
    assert "does not match its sha256" in capsys.readouterr().err

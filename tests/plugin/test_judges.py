"""--soclab-judge=both through the plugin: the rules judge scores, an LLM judge (a fake
OpenAI-compatible server on loopback) gives a second opinion, the scorecard reports kappa."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_chat import ChatHandler, serve

from project import make_project


class _AlwaysMiss(ChatHandler):
    """A strict grader: every checkpoint is a miss."""

    def answer(self, body: dict[str, Any], user: str) -> str:
        cps = json.loads(re.search(r"<checkpoints>\n(.*?)\n</checkpoints>", user, re.S).group(1))
        verdicts = [{"index": c["index"], "verdict": "miss", "justification": "not convinced", "evidence": []} for c in cps]
        return json.dumps({"verdicts": verdicts})


@pytest.fixture
def model_server() -> Iterator[str]:
    with serve(_AlwaysMiss) as url:
        yield url


def test_both_judges_report_their_agreement(pytester: pytest.Pytester, soclab_cache: Path, model_server: str) -> None:
    pytest.importorskip("openai")
    make_project(pytester, soclab_cache, agent="playbook", atk=None, ben=None, tasks=True)
    out = pytester.path / "results.json"
    result = pytester.runpytest(
        "-p", "no:cacheprovider", f"--soclab-json={out}", "--soclab-judge=both:llm:openai:strict-grader",
        f"--soclab-llm-base-url={model_server}", "--soclab-llm-api-key=test",
    )  # fmt: skip
    result.stdout.fnmatch_lines(["*judges rules vs llm:*: Cohen's kappa *, agreement *% over * checkpoints, * disagreements*"])
    data = json.loads(out.read_text())
    judges = data["modes"]["protected"]["judges"]
    (item,) = data["items"]
    hits = sum(1 for c in item["checkpoints"] if c["verdict"] != "miss")
    assert judges["first"] == "rules" and judges["checkpoints"] == len(item["checkpoints"])
    assert len(judges["disagreements"]) == hits  # the strict grader disagrees wherever rules gave credit
    assert item["judge_extra"]["comparison"]["second_judge"].startswith("llm:")

"""Cost: tokens and calls from the provider's usage fields, priced from soclab.yaml, per item and per solved task."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from factories import item, results
from project import make_project
from pytest_soclab.cli import main as soclab
from pytest_soclab.models import ModelPrice
from pytest_soclab.report import write_results
from pytest_soclab.run import price_usage
from pytest_soclab.scoring import cost_summary

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fake_agent_server import Investigator  # noqa: E402
from fake_chat import serve  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PRICED = "prices:\n  fake-model: {input: 1.0, output: 2.0}\n"


def test_a_fake_server_run_records_tokens_calls_and_cost(pytester: pytest.Pytester, soclab_cache: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SOCLAB_LLM_PRICES"):
        monkeypatch.delenv(var, raising=False)
    make_project(pytester, soclab_cache, agent="openai:fake-model", tasks=True, ben=None)
    (pytester.path / "soclab.yaml").write_text(PRICED)
    out = pytester.path / "results.json"
    with serve(Investigator) as url:
        result = pytester.runpytest(f"--soclab-json={out}", f"--soclab-llm-base-url={url}", "--soclab-llm-api-key=k",
                                    "-p", "no:cacheprovider")  # fmt: skip
    data = json.loads(out.read_text())
    for i in data["items"]:
        # Two model turns (a search, then the report): 2 x 120 tokens in, 2 x 30 out, at $1 / $2 per million.
        assert i["usage"]["llm_calls"] == 2, i["error"]
        assert (i["usage"]["input_tokens"], i["usage"]["output_tokens"]) == (240, 60)
        assert i["usage"]["cost_usd"] == pytest.approx(0.00036)
    cost = data["modes"]["protected"]["cost"]
    assert cost["items"] == 2 and cost["llm_calls"] == 4 and cost["cost_usd"] == pytest.approx(0.00072)
    assert cost["cost_per_item"] == pytest.approx(0.00036)
    assert cost["solved_tasks"] == 0 and cost["cost_per_solved_task"] is None  # nothing solved: no such cost
    result.stdout.fnmatch_lines(["*cost [[]protected[]]: 4 model calls, 480 tokens in / 120 out, $0.0007*"])


def test_soclab_yaml_prices_win_and_unknown_prices_stay_unknown() -> None:
    usage = {"llm_calls": 1, "input_tokens": 1_000_000, "output_tokens": 500_000, "cost_usd": 9.0}
    prices = {"gpt-x": ModelPrice(input=2.0, output=4.0)}
    assert price_usage(usage, "gpt-x-2025-01-01", prices)["cost_usd"] == 4.0  # a dated snapshot shares the price
    assert price_usage(usage, "other", prices)["cost_usd"] == 9.0
    assert price_usage(usage, None, prices) == usage
    unknown = cost_summary([item("T-1", "task", usage={"llm_calls": 1, "cost_usd": None}),
                            item("T-2", "task", usage={"llm_calls": 1, "cost_usd": 0.5})])  # fmt: skip
    assert unknown is not None and unknown["cost_usd"] is None and unknown["unpriced_items"] == 1


def test_cost_per_solved_task_and_the_frontier_over_several_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def run(agent: str, score: float, cost: float) -> Path:
        items = [item(f"T-{i}", "task", score=score, usage={"llm_calls": 3, "input_tokens": 10, "output_tokens": 5,
                                                             "cost_usd": cost}) for i in range(4)]  # fmt: skip
        res = results(items, agent=agent)
        path = tmp_path / f"{agent}.json"
        write_results(res, path)
        return path

    cheap, dear, bad = run("cheap", 0.7, 0.01), run("dear", 0.9, 0.05), run("bad", 0.5, 0.05)
    summary = json.loads(cheap.read_text())["modes"]["protected"]["cost"]
    assert summary["solved_tasks"] == 4 and summary["cost_per_solved_task"] == pytest.approx(0.01)
    assert soclab(["compare", str(cheap), str(dear), str(bad)]) == 0
    out = capsys.readouterr().out
    lines = out[out.index("cost/score frontier"):].splitlines()[1:]
    assert lines[0].lstrip().startswith("* cheap.json") and lines[1].lstrip().startswith("* dear.json")
    assert lines[2].lstrip().startswith("bad.json")  # scores less than `dear` for the same money

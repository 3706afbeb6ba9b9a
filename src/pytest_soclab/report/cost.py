"""Cost views: a line per mode for the terminal, a block for the HTML scorecard, the cost/score frontier."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from pytest_soclab.models import CostSummary, ItemResult, ResultsFile


def usd(v: float | None) -> str:
    return "unknown" if v is None else f"${v:.4f}"


def cost_line(mode: str, c: CostSummary) -> str:
    unpriced = f" ({c.unpriced_items} item(s) with no known price)" if c.unpriced_items else ""
    return (f"cost [{mode}]: {c.llm_calls} model calls, {c.input_tokens} tokens in / {c.output_tokens} out, "
            f"{usd(c.cost_usd)}{unpriced}; per item {usd(c.cost_per_item)}, per solved task "
            f"{usd(c.cost_per_solved_task)} ({c.solved_tasks} solved)")


def cost_lines(results: ResultsFile) -> list[str]:
    return [cost_line(mode, s.cost) for mode, s in results.modes.items() if s.cost is not None]


def cost_html(results: ResultsFile) -> str:
    rows = "".join(
        f"<tr><td>{escape(mode)}</td><td>{c.llm_calls}</td><td>{c.input_tokens}</td><td>{c.output_tokens}</td>"
        f"<td>{usd(c.cost_usd)}</td><td>{usd(c.cost_per_item)}</td><td>{usd(c.cost_per_solved_task)}</td></tr>"
        for mode, s in results.modes.items() if (c := s.cost) is not None
    )
    if not rows:
        return ""
    return ("<h3>cost</h3><table><tr><th>mode</th><th>model calls</th><th>tokens in</th><th>tokens out</th>"
            f"<th>cost</th><th>per item</th><th>per solved task</th></tr>{rows}</table>")


def item_usage_html(r: ItemResult) -> str:
    u = r.usage
    if not u:
        return ""
    return (f"<p>model usage: {u.get('llm_calls', 0)} calls, {u.get('input_tokens', 0)} tokens in / "
            f"{u.get('output_tokens', 0)} out, cost {usd(u.get('cost_usd'))}</p>")  # type: ignore[arg-type]


# -- several runs: the cost/score frontier ------------------------------------------------------
@dataclass(frozen=True)
class RunPoint:
    name: str
    agent: str
    mode: str
    score: float | None  # the mode's weighted family score
    cost: float | None  # total cost in USD
    cost_per_solved_task: float | None
    on_frontier: bool = False


def frontier(runs: list[tuple[Path, ResultsFile]], mode: str | None = None) -> list[RunPoint]:
    """Each run's score and cost in one mode (protected unless said); a run is on the frontier when no
    other run scores at least as well for no more money, and better on one of them."""
    points: list[RunPoint] = []
    for path, res in runs:
        m = mode or ("protected" if "protected" in res.modes else next(iter(res.modes)))
        s = res.modes.get(m)
        if s is None:
            continue
        c = s.cost
        points.append(RunPoint(path.name, res.run.agent, m, s.metrics["weighted_score"].value,
                               c.cost_usd if c else None, c.cost_per_solved_task if c else None))
    known = [p for p in points if p.score is not None and p.cost is not None]

    def dominated(p: RunPoint) -> bool:
        return any(q is not p and q.score >= p.score and q.cost <= p.cost and (q.score > p.score or q.cost < p.cost)
                   for q in known)  # type: ignore[operator]

    out = [RunPoint(**{**p.__dict__, "on_frontier": p in known and not dominated(p)}) for p in points]
    return sorted(out, key=lambda p: (p.cost is None, p.cost or 0.0, -(p.score or 0.0)))


def frontier_lines(points: list[RunPoint]) -> list[str]:
    out = ["cost/score frontier (weighted family score vs total cost; * = on the frontier):"]
    for p in points:
        score = "n/a" if p.score is None else f"{p.score:.3f}"
        out.append(f"  {'*' if p.on_frontier else ' '} {p.name:<28} {p.agent:<28} [{p.mode}] score {score}  "
                   f"cost {usd(p.cost)}  per solved task {usd(p.cost_per_solved_task)}")
    return out


def frontier_dict(points: list[RunPoint]) -> list[dict[str, Any]]:
    return [dict(p.__dict__) for p in points]

"""Synthetic item results for scoring and reporting tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_soclab.models.results import CollectionInfo, ItemResult, ResultsFile
from pytest_soclab.plugin.settings import Settings, run_info
from pytest_soclab.scoring import build_scorecard
from pytest_soclab.models.suite_config import load_suite


def item(sid: str, kind: str = "attack", *, family: str | None = None, mode: str = "protected", score: float = 1.0,
         repeat: int = 1, repeats: int = 1, severity: str | None = None, **kw: Any) -> ItemResult:
    family = family or {"attack": "injection", "benign": "containment", "task": "easy"}[kind]
    outcome = kw.pop("outcome", "passed" if score >= (0.6 if kind == "task" else 1.0) else "failed")
    if kind == "attack":
        kw.setdefault("attack_succeeded", outcome != "passed")
        severity = severity or "high"
    return ItemResult(nodeid=f"{sid}[{mode}-{repeat}-{repeats}]", scenario_id=sid, kind=kind, family=family,
                      severity=severity, mode=mode, repeat=repeat, repeats=repeats, outcome=outcome, score=score, **kw)  # fmt: skip


def settings(modes: tuple[str, ...] = ("protected",), agent: str = "agent-a") -> Settings:
    root = Path(".")
    return Settings(rootdir=root, modes=modes, agent=agent, judge="rules", suite_path=None, json_path=None,
                    timeout=1, max_tool_calls=10, es={}, policy_dir=root, policy_engine="regorus",
                    policy_timeout_ms=250, corpus_dir=root, cache_dir=root, scale=1, seed=None, enforce_gates=None)  # fmt: skip


def results(items: list[ItemResult], *, agent: str = "agent-a", repeats: int = 1) -> ResultsFile:
    modes = tuple(sorted({i.mode for i in items})) or ("protected",)
    col = CollectionInfo(expected=len(items), reported=len(items))
    return build_scorecard(items, load_suite(None), run_info(settings(modes, agent), repeats), col)

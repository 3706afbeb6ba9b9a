"""A case and its simulator outside pytest, for the command line (`soclab mcp`, `query`, `serve`, `load`).

The same pieces the plugin's fixtures use: the case library (built once, cached),
the backend (with an ATK scenario's planted documents as an overlay), the guard
and the action surface.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_soclab.errors import SoclabError
from pytest_soclab.loader import Spec, load_spec
from pytest_soclab.models.scenario import AttackScenario
from pytest_soclab.sim.cases import BuiltCase, CaseLibrary
from pytest_soclab.sim.simulator import ScenarioContext, Simulator
from pytest_soclab.tools import ALL_TOOLS


def add_case_options(p: argparse.ArgumentParser, *, scenario: bool = True, mode: bool = True) -> None:
    """The options every case-backed command shares."""
    p.add_argument("--case", metavar="CASE", help="the case (a directory under --corpus-dir)")
    if scenario:
        p.add_argument("--scenario", type=Path, metavar="FILE", help="a task, ATK or BEN file: its case, tools and planted documents")
    if mode:
        p.add_argument("--mode", choices=("baseline", "protected"), default="protected",
                       help="protected: every tool call passes the guard (default)")  # fmt: skip
    p.add_argument("--corpus-dir", type=Path, default=Path("corpus"), help="where the cases live (default ./corpus)")
    p.add_argument("--cache-dir", type=Path, default=Path(".soclab-cache"), help="built-case cache (default ./.soclab-cache)")
    p.add_argument("--policy-dir", type=Path, default=Path("rego"), help="the Rego policies (default ./rego)")
    p.add_argument("--scale", type=float, default=1.0, help="background scale of the generated case (default 1)")
    p.add_argument("--seed", type=int, default=None, help="override the case's generation seed")


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def load_case(args: argparse.Namespace, spec: Spec | None = None) -> BuiltCase:
    case_id = getattr(args, "case", None) or (spec.case if spec is not None else None)
    if not case_id:
        raise SoclabError("give --case CASE (or --scenario FILE)")
    if spec is not None and getattr(args, "case", None) and args.case != spec.case:
        raise SoclabError(f"--case {args.case} differs from the scenario's case {spec.case}")
    lib = CaseLibrary(args.corpus_dir, args.cache_dir, scale=args.scale, seed=args.seed, progress=_progress)
    return lib.get(case_id)


def load_scenario(args: argparse.Namespace) -> Spec | None:
    path = getattr(args, "scenario", None)
    return load_spec(path) if path else None


def open_backend(case: BuiltCase, spec: Spec | None) -> Any:
    from pytest_soclab.store.embedded import EmbeddedBackend

    planted = spec.planted if isinstance(spec, AttackScenario) else []
    overlay = None
    if planted:
        from pytest_soclab.corpus.planted import expand_planted

        expanded = expand_planted(case.recipe, [(p.index, p.doc) for p in planted])
        overlay = [(stream, p.id or doc_id, doc) for (stream, doc_id, doc), p in zip(expanded, planted)]
    if case.db_path is None:
        raise SoclabError(f"case {case.id} has no built store")
    return EmbeddedBackend.open(case.db_path, overlay=overlay, now=case.now())


def context_for(case: BuiltCase, spec: Spec | None, max_tool_calls: int, legit: list[Any] | None = None) -> ScenarioContext:
    if spec is None:
        # A bare case: every tool, no scenario-specific limits.
        return ScenarioContext(id=case.id, kind="case", allowed_tools=list(ALL_TOOLS), scope=case.scope(),
                               max_tool_calls=max_tool_calls)  # fmt: skip
    limit = min(x for x in (spec.max_tool_calls, max_tool_calls) if x)
    return ScenarioContext(id=spec.id, kind=spec.kind, allowed_tools=list(spec.allowed_tools), scope=case.scope(),
                           legit=list(legit or []), max_tool_calls=limit)  # fmt: skip


def build_simulator(case: BuiltCase, context: ScenarioContext, mode: str, backend: Any, guard: Any) -> Simulator:
    from pytest_soclab.sim.actions import ActionSurface

    actions = ActionSurface(case.estate)  # works on its own copy: the simulator and oracles read that copy
    return Simulator(context, mode, backend, actions.estate, guard, actions)


@dataclass
class Session:
    simulator: Simulator
    spec: Spec | None
    case: BuiltCase

    @property
    def trigger(self) -> dict[str, Any] | None:
        return self.spec.trigger.model_dump() if self.spec is not None else None


def open_session(args: argparse.Namespace, *, max_tool_calls: int = 10_000) -> Session:
    """Case, backend, guard (protected mode) and simulator for a command-line invocation."""
    from pytest_soclab.guard import load_guard
    from pytest_soclab.itemflow import legit_actions

    spec = load_scenario(args)
    case = load_case(args, spec)
    mode = getattr(args, "mode", "protected")
    guard = load_guard(args.policy_dir)  # baseline records its decisions without enforcing them
    backend = open_backend(case, spec)
    ctx = context_for(case, spec, max_tool_calls, legit_actions(spec) if spec is not None else None)
    return Session(build_simulator(case, ctx, mode, backend, guard), spec, case)

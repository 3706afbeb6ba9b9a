"""The options every case-backed command shares, and turning them into a case and a session."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_soclab.errors import SoclabError
from pytest_soclab.models import Spec, load_spec
from pytest_soclab.models import MODES
from pytest_soclab.run import Session, open_session
from pytest_soclab.sim import BuiltCase, CaseLibrary


def add_case_options(p: argparse.ArgumentParser, *, scenario: bool = True, mode: bool = True) -> None:
    p.add_argument("--case", metavar="CASE", help="the case (a directory under --corpus-dir)")
    if scenario:
        p.add_argument("--scenario", type=Path, metavar="FILE", help="a task, ATK or BEN file: its case, tools and planted documents")
    if mode:
        p.add_argument("--mode", choices=MODES, default="protected",
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


def session_from_args(args: argparse.Namespace, *, max_tool_calls: int = 10_000) -> Session:
    """Case, backend, guard (protected mode) and simulator for a command-line invocation."""
    spec = load_scenario(args)
    case = load_case(args, spec)
    return open_session(case, spec, mode=getattr(args, "mode", "protected"), policy_dir=args.policy_dir,
                        max_tool_calls=max_tool_calls)  # fmt: skip

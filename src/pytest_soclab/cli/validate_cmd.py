"""`soclab validate [PATHS]`: lint scenario and task files (schema, oracles, case references, planted ECS, answer keys)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_soclab.errors import SoclabError

DEFAULT_DIRS = ("scenarios", "benign", "tasks")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "validate",
        help="lint scenario (ATK/BEN) and task files against the schema, the oracles and their case",
        description="Exit status 0 when every file is valid, 1 when a problem was found, 2 on a usage error.",
    )
    p.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help=f"files or directories (default: {', '.join(DEFAULT_DIRS)} where they exist)",
    )
    p.add_argument(
        "--corpus-dir", type=Path, default=Path("corpus"), help="where the cases live (default ./corpus)"
    )
    p.add_argument(
        "--suite",
        type=Path,
        default=None,
        help="suite file with the families (default: ./soclab.yaml if present, else the defaults)",
    )
    p.add_argument(
        "--predicates",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="a dict of extra oracle predicates a project registers (repeatable)",
    )
    p.add_argument(
        "--scale",
        type=float,
        default=None,
        help="background scale used to generate the cases for the answer-key checks (default 0.05)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print problems only, no summary")
    p.add_argument(
        "--explain",
        action="store_true",
        help="also print, per task checkpoint and response line, what the rules judge will look for",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pytest_soclab.run import BUILTIN, as_predicate
    from pytest_soclab.models import load_suite
    from pytest_soclab.run import DEFAULT_SCALE, Validator

    paths = list(args.paths) or [Path(d) for d in DEFAULT_DIRS if Path(d).is_dir()]
    if not paths:
        raise SoclabError(f"nothing to validate: give paths, or run where {', '.join(DEFAULT_DIRS)} exist")
    if not args.corpus_dir.is_dir():
        raise SoclabError(f"--corpus-dir {args.corpus_dir}: no such directory")
    suite_path = args.suite or (Path("soclab.yaml") if Path("soclab.yaml").is_file() else None)
    suite = load_suite(suite_path)
    registry = dict(BUILTIN)
    for spec in args.predicates:
        registry.update({k: as_predicate(v) for k, v in _import(spec).items()})
    validator = Validator(
        args.corpus_dir,
        suite=suite,
        predicates=registry,
        scale=args.scale if args.scale is not None else DEFAULT_SCALE,
    )
    n, problems = validator.validate_paths(paths, root=Path.cwd())
    if args.explain:
        for line in validator.explain_paths(paths, root=Path.cwd()):
            print(line)
    for p in problems:
        print(p)
    if not args.quiet:
        files = {p.path for p in problems}
        verdict = "ok" if not problems else f"{len(problems)} problem(s) in {len(files)} file(s)"
        print(f"soclab validate: {n} file(s) checked, {verdict}", file=sys.stderr)
    return 1 if problems else 0


def _import(spec: str) -> dict:
    import importlib

    module, _, attr = spec.partition(":")
    if not attr:
        raise SoclabError(f"--predicates {spec!r}: expected MODULE:ATTR")
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise SoclabError(f"--predicates {spec!r}: {exc}") from None
    obj = obj() if callable(obj) else obj
    if not isinstance(obj, dict):
        raise SoclabError(f"--predicates {spec!r}: expected a dict of predicate name -> predicate")
    return obj

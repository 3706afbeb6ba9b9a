"""`soclab attack --budget N --against protected`: search for composed attacks the guard lets through."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("attack", help="adaptive, model-free search for composed attacks the guard misses")
    p.add_argument("--budget", type=int, default=2000, help="guard decisions the search may spend (default 2000)")
    p.add_argument("--against", choices=("protected",), default="protected", help="the configuration attacked")
    p.add_argument("--seed", type=int, default=18)
    p.add_argument("--policy-dir", type=Path, default=Path("rego"))
    p.add_argument("--corpus-dir", type=Path, default=Path("corpus"))
    p.add_argument("--cache-dir", type=Path, default=Path(".soclab-cache"))
    p.add_argument("--tasks-dir", type=Path, default=Path("tasks"))
    p.add_argument("--bases", nargs="*", default=[], metavar="TASK", help="task ids to plant into (default: all)")
    p.add_argument("--objectives", nargs="*", default=[], metavar="NAME", help="objectives to search (default: all)")
    p.add_argument("--agent", default="gullible", help="the susceptible agent (default gullible)")
    p.add_argument("--out", type=Path, default=Path("composed/regressions"), help="where bypasses are written")
    p.add_argument("--no-write", action="store_true", help="report only; write no regression files")
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here: the search loads the store, the guard and the agents, which `soclab --help` need not.
    from pytest_soclab.attacks import load_bases
    from pytest_soclab.attacks.search import SEARCHED, Search, write_regressions
    from pytest_soclab.guard import load_guard
    from pytest_soclab.sim import CaseLibrary

    bases = load_bases(args.tasks_dir, args.corpus_dir, list(args.bases), [])
    guard = load_guard(args.policy_dir)
    try:
        search = Search(bases, CaseLibrary(args.corpus_dir, args.cache_dir), guard, Path.cwd(), seed=args.seed,
                        objectives=tuple(args.objectives) or SEARCHED, agent=args.agent)  # fmt: skip
        result = search.run(args.budget)
        search.confirm(result)
    finally:
        guard.close()
    report = result.summary()
    print(f"soclab attack: {report['decisions']} guard decisions, {report['candidates']} candidates, "
          f"{report['bypasses']} distinct bypass(es), {report['confirmed']} confirmed by a full run")  # fmt: skip
    for name, st in sorted(report["by_objective"].items()):
        rate = st["bypasses"] / st["candidates"] if st["candidates"] else 0.0
        print(f"  {name:16} candidates {st['candidates']:4}  agent acted {st['acted']:4}  let through {st['bypasses']:4}"
              f"  attack success {rate:.1%}")  # fmt: skip
    for out, spec in result.confirmed:
        print(f"  bypass {spec.id}: {out.candidate.key}")
    if not args.no_write:
        for path in write_regressions(result, args.out):
            print(f"  wrote {path}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return 0

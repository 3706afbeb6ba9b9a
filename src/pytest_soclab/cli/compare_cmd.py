"""`soclab compare A.json B.json [C.json ...]`: what changed between runs, whether it is significant,
and (with model usage) the cost/score frontier."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare results files (per family and per scenario, with significance; "
                                       "cost/score frontier over several runs)")  # fmt: skip
    p.add_argument("a", type=Path, help="results file A (the reference)")
    p.add_argument("b", type=Path, help="results file B")
    p.add_argument("more", type=Path, nargs="*", help="more results files: only the cost/score frontier covers them")
    p.add_argument("--markdown", action="store_true", help="print markdown instead of a terminal table")
    p.add_argument("--out", type=Path, help="also write the markdown to this file")
    p.add_argument("--mode", help="the mode whose score and cost the frontier uses (default: protected)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pytest_soclab.report.compare import compare, load_results, render_markdown, render_text
    from pytest_soclab.report.cost import frontier, frontier_lines

    a, b = load_results(args.a), load_results(args.b)
    cmp = compare(a, b)
    print(render_markdown(cmp) if args.markdown else render_text(cmp))
    if args.out:
        args.out.write_text(render_markdown(cmp), encoding="utf-8")
    runs = [(args.a, a), (args.b, b), *((p, load_results(p)) for p in args.more)]
    if args.more or any(s.cost is not None for _, r in runs for s in r.modes.values()):
        print()
        for line in frontier_lines(frontier(runs, args.mode)):
            print(line)
    return 0

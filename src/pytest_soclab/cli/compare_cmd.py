"""`soclab compare A.json B.json`: what changed between two runs, and whether it is significant."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare two results files (per family and per scenario, with significance)")
    p.add_argument("a", type=Path, help="results file A (the reference)")
    p.add_argument("b", type=Path, help="results file B")
    p.add_argument("--markdown", action="store_true", help="print markdown instead of a terminal table")
    p.add_argument("--out", type=Path, help="also write the markdown to this file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pytest_soclab.report.compare import compare, load_results, render_markdown, render_text

    cmp = compare(load_results(args.a), load_results(args.b))
    print(render_markdown(cmp) if args.markdown else render_text(cmp))
    if args.out:
        args.out.write_text(render_markdown(cmp), encoding="utf-8")
    return 0

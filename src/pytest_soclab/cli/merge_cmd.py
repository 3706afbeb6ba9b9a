"""`soclab merge A.json B.json ... --out ALL.json`: the results of shards, as one run."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pytest_soclab.report import load_results, terminal, write_page, write_results
from pytest_soclab.run import merge_results


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("merge", help="merge the results files of shards into one (every statistic recomputed)")
    p.add_argument("files", type=Path, nargs="+", help="results files of the shards (--soclab-json of each)")
    p.add_argument("--out", type=Path, required=True, help="write the merged results file here")
    p.add_argument("--html", type=Path, help="also write a standalone HTML report (scorecard and items) here")
    p.add_argument("--quiet", action="store_true", help="do not print the merged scorecard")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    merged = merge_results([(path, load_results(path)) for path in args.files])
    write_results(merged, args.out)
    if args.html:
        write_page(merged, args.html, title=f"soclab merge: {args.out.name}")
    if not args.quiet:
        for line in terminal.summary_lines(merged):
            print(line)
    print(f"soclab merge: {len(args.files)} files, {len(merged.items)} items -> {args.out} "
          f"({time.perf_counter() - started:.2f}s)")
    return 0

"""`soclab rescore RESULTS.json --judge rules|llm:openai:MODEL --out NEW.json`: judge recorded runs again."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pytest_soclab.judge import resolve_judge
from pytest_soclab.models import Rescore
from pytest_soclab.report import load_results, terminal, write_page, write_results
from pytest_soclab.run import rescore


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rescore", help="judge a results file's recorded task items again (no agent runs)")
    p.add_argument("results", type=Path, help="a results file (--soclab-json)")
    p.add_argument("--judge", required=True, help="rules, llm:openai:MODEL, llm:anthropic:MODEL or both:llm:...")
    p.add_argument("--out", type=Path, required=True, help="write the rescored results file here")
    p.add_argument("--cache-dir", type=Path, default=Path(".soclab-cache") / "judge",
                   help="LLM judge verdict cache (default: .soclab-cache/judge)")
    p.add_argument("--no-cache", action="store_true", help="ask the LLM judge again even for cached inputs")
    p.add_argument("--llm-base-url", default="", help="base URL of an OpenAI-compatible or Anthropic endpoint")
    p.add_argument("--llm-api-key", default="", help="API key (else the provider's usual variable)")
    p.add_argument("--html", type=Path, help="also write a standalone HTML report (scorecard and items) here")
    p.add_argument("--quiet", action="store_true", help="do not print the rescored scorecard")
    p.set_defaults(func=run)


def agreement_lines(info: Rescore) -> list[str]:
    kappa = "n/a" if info.kappa is None else f"{info.kappa:.3f}"
    agree = "n/a" if info.agreement is None else f"{info.agreement:.1%}"
    lines = [
        f"rescored {info.rescored} task item(s) with {info.judge} (previous judge: {info.previous_judge}); "
        f"{info.kept} kept (no recorded evidence)",
        f"agreement with {info.previous_judge}: {agree} of {info.checkpoints} checkpoints, kappa {kappa}; "
        f"{info.unscored} checkpoint(s) unscored",
    ]
    if info.changed_outcomes:
        lines.append("outcome changed: " + ", ".join(info.changed_outcomes))
    return lines


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    cache_dir = None if args.no_cache else args.cache_dir
    judge = resolve_judge(args.judge, cache_dir=cache_dir, llm={"base_url": args.llm_base_url,
                                                                "api_key": args.llm_api_key})  # fmt: skip
    out = rescore(load_results(args.results), judge)
    write_results(out, args.out)
    if args.html:
        write_page(out, args.html, title=f"soclab rescore: {args.out.name}")
    if not args.quiet:
        for line in terminal.summary_lines(out):
            print(line)
    assert out.rescore is not None
    for line in agreement_lines(out.rescore):
        print(line)
    print(f"soclab rescore: -> {args.out} ({time.perf_counter() - started:.2f}s)")
    return 0

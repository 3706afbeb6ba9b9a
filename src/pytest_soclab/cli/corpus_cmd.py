"""`soclab corpus build CASE [--scale N] [--seed S] [--out DIR]` and `soclab corpus list`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pytest_soclab.corpus import build_case
from pytest_soclab.corpus import find_case, list_cases, load_case
from pytest_soclab.corpus import is_recorded, load_recorded
from pytest_soclab.errors import SoclabError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("corpus", help="build case corpora (ECS documents) from case recipes")
    sub = p.add_subparsers(dest="corpus_command", metavar="ACTION")
    b = sub.add_parser("build", help="generate a case's documents as NDJSON per data stream, plus a manifest")
    b.add_argument("case", help="case id (a directory under --corpus-dir with a case.yaml) or a path to one")
    b.add_argument("--scale", type=float, default=1.0, help="background volume multiplier (default 1.0)")
    b.add_argument("--seed", type=int, default=None, help="random seed (default: the recipe's)")
    b.add_argument("--out", type=Path, default=None, help="output directory (default: build/corpus/CASE)")
    b.add_argument(
        "--corpus-dir", type=Path, default=Path("corpus"), help="where the cases live (default ./corpus)"
    )
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    b.set_defaults(func=_build)
    ls = sub.add_parser("list", help="list the cases")
    ls.add_argument("--corpus-dir", type=Path, default=Path("corpus"))
    ls.set_defaults(func=_list)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


class _Bar:
    """A one-line progress bar on stderr (only on a terminal, at most ~10 redraws per second)."""

    def __init__(self, label: str):
        self.label = label
        self.last = 0.0
        self.t0 = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        frac = done / total if total else 1.0
        width = 30
        fill = int(frac * width)
        rate = done / max(now - self.t0, 1e-9)
        sys.stderr.write(
            f"\r{self.label} [{'#' * fill}{'.' * (width - fill)}] {frac:4.0%} {done:,} docs {rate:,.0f}/s "
        )
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\n")


def _resolve(case: str, corpus_dir: Path) -> Path:
    path = Path(case)
    if (path / "case.yaml").is_file() or (path.suffix in (".yaml", ".yml") and path.is_file()):
        return path
    return find_case(corpus_dir, case)


def _build(args: argparse.Namespace) -> int:
    if args.scale < 0:
        raise SoclabError("--scale must not be negative")
    case_dir = _resolve(args.case, args.corpus_dir)
    if is_recorded(case_dir if case_dir.is_dir() else case_dir.parent):
        rec = load_recorded(case_dir if case_dir.is_dir() else case_dir.parent)
        files = " ".join(str(f) for f in rec.recording.files)
        raise SoclabError(f"{rec.id} is a recorded case: nothing to generate. It is imported from its recording when "
                          f"first used (pytest, soclab query/serve/mcp/load); to convert the recording yourself: "
                          f"soclab import {rec.recording.importer} --out DIR {files} (paths under the corpus directory)")
    recipe = load_case(case_dir)
    out = args.out or Path("build") / "corpus" / recipe.id
    bar = None if args.quiet or not sys.stderr.isatty() else _Bar(recipe.id)
    try:
        manifest = build_case(recipe, out, scale=args.scale, seed=args.seed, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    rate = manifest["total"] / max(manifest["elapsed_seconds"], 1e-9)
    print(
        f"{recipe.id}: {manifest['total']:,} documents in {len(manifest['streams'])} data streams "
        f"({manifest['elapsed_seconds']:.1f} s, {rate:,.0f} docs/s) -> {out}"
    )
    for stream, info in manifest["streams"].items():
        print(f"  {info['count']:>10,}  {stream}")
    print(f"fingerprint {manifest['fingerprint']}  sha256 {manifest['corpus_sha256']}")
    return 0


def _list(args: argparse.Namespace) -> int:
    cases = list_cases(args.corpus_dir)
    if not cases:
        raise SoclabError(f"no cases in {args.corpus_dir}")
    for c in cases:
        # A recorded case's title is in its case file too; `load_recorded` reads it without importing.
        r = load_recorded(args.corpus_dir / c) if is_recorded(args.corpus_dir / c) else load_case(args.corpus_dir / c)
        print(f"{c:32} {r.title}")
    return 0

"""Corpus generation throughput: documents per second, generation alone and with NDJSON writing.

Run from the repository root:
    PYTHONPATH=src python bench/corpus_bench.py [--case CASE] [--scales 1,10,40] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pytest_soclab.corpus.build import build_case
from pytest_soclab.corpus.generate import generate
from pytest_soclab.corpus.recipe import find_case, load_case


def _gen(recipe, scale: float) -> tuple[int, float, float]:
    """(documents, wall seconds, CPU seconds of this process): on a shared machine the CPU figure is
    the one that does not depend on what else runs."""
    t0, c0 = time.perf_counter(), time.process_time()
    n = 0
    for _ in generate(recipe, scale=scale):
        n += 1
    return n, time.perf_counter() - t0, time.process_time() - c0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus-dir", type=Path, default=Path("corpus"))
    ap.add_argument("--case", default="case-06-capstone")
    ap.add_argument("--scales", default="1,10,40")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write-scale", type=float, default=10.0, help="scale for the NDJSON write measurement")
    args = ap.parse_args(argv)
    recipe = load_case(find_case(args.corpus_dir, args.case))
    print(f"case {recipe.id}, python {sys.version.split()[0]}")
    print(f"generate only, median of {args.repeat} runs")
    print(f"{'scale':>6} {'docs':>10} {'wall s':>8} {'docs/s':>10} {'cpu s':>8} {'docs/cpu-s':>11}")
    for scale in [float(s) for s in args.scales.split(",")]:
        runs = [_gen(recipe, scale) for _ in range(args.repeat)]
        n = runs[0][0]
        wall = statistics.median(r[1] for r in runs)
        cpu = statistics.median(r[2] for r in runs)
        print(f"{scale:>6g} {n:>10,} {wall:>8.2f} {n / wall:>10,.0f} {cpu:>8.2f} {n / cpu:>11,.0f}")
    with tempfile.TemporaryDirectory() as tmp:
        t0, c0 = time.perf_counter(), time.process_time()
        m = build_case(recipe, Path(tmp) / "out", scale=args.write_scale)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        size = sum((Path(tmp) / "out" / s["file"]).stat().st_size for s in m["streams"].values())
    print(
        f"build (generate + NDJSON + sha256) at scale {args.write_scale:g}: {m['total']:,} docs in {dt:.1f} s"
        f" = {m['total'] / dt:,.0f} docs/s ({m['total'] / cpu:,.0f} per cpu-s), {size / 1e6:,.0f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

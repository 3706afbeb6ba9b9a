"""`soclab merge` timing: split a results file into shards, merge them back, check the scorecard.

    python bench/merge_bench.py RESULTS.json [--shards 3] [--repeat 3]

The shards are the file's items dealt round-robin (as pytest-split would give whole items); the
merged scorecard must equal the original's. Prints the median wall time of `merge_results`
(reading the files, checking fingerprints, recomputing every statistic).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from pytest_soclab.models import CollectionInfo
from pytest_soclab.report import load_results, write_results
from pytest_soclab.run import merge_results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--shards", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    whole = load_results(args.results)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k in range(args.shards):
            part = whole.model_copy(deep=True)
            part.items = whole.items[k :: args.shards]
            part.collection = CollectionInfo(expected=len(part.items), reported=len(part.items))
            paths.append(Path(tmp) / f"shard-{k}.json")
            write_results(part, paths[-1])
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            merged = merge_results([(p, load_results(p)) for p in paths])
            times.append(time.perf_counter() - started)
    same = merged.modes == whole.modes and merged.comparison == whole.comparison
    print(f"{len(whole.items)} items in {args.shards} shards: merge median {statistics.median(times):.2f} s "
          f"(min {min(times):.2f}); scorecard equal to the original: {same}")


if __name__ == "__main__":
    main()

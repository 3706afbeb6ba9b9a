"""CPU time of `pytest --collect-only -q` on the repository's own benchmark (tasks, scenarios, benign).

CPU seconds (user + system of the child) rather than wall time: the figure then holds on a shared,
loaded machine. Run from the repository root:

    PYTHONPATH=src python bench/collect_bench.py --repeat 5
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_run() -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT, env=dict(os.environ), check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    runs = [one_run() for _ in range(args.repeat)]
    print(f"collect-only CPU s: median {statistics.median(runs):.2f} (runs {', '.join(f'{r:.2f}' for r in runs)})")


if __name__ == "__main__":
    main()

"""--soclab-resume timing: a run whose items are all carried from a previous results file.

    python bench/resume_bench.py [--items 200]

Makes the benchmark project of concurrency_bench.py, runs it once (an agent that answers at once,
from the fake server), then again with --soclab-resume on that file: every item is carried, so the
second run's wall time is the harness's cost of resuming (collection, fingerprints, carrying,
scorecard). Prints both.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from concurrency_bench import Investigator, project, run, serve  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=200)
    args = ap.parse_args()
    handler = type("Direct", (Investigator,), {"delay": 0.0, "search_first": False})
    with tempfile.TemporaryDirectory(prefix="soclab-resume-") as tmp, serve(handler) as url:
        root = Path(tmp)
        project(root, args.items)
        first = run(root, url, "first.json")
        resumed = run(root, url, "resumed.json", f"--soclab-resume={root / 'first.json'}")
        data = json.loads((root / "resumed.json").read_text())
    carried = sum(1 for i in data["items"] if i["carried"])
    print(f"{len(data['items'])} items: first run {first:.1f} s; resumed run {resumed:.1f} s ({carried} carried)")


if __name__ == "__main__":
    main()

"""Time a stratified sample of the composed suite at -n 2 and extrapolate to the whole suite.

    PYTHONPATH=src python bench/composed_time.py [--sample 22] [--agent gullible] [--modes both]

Runs `pytest composed --soclab-sample=N -n 2` (both modes), reads the results file, and prints
the wall time, the items run, the mean item time (the items' own `duration_s`) and the full
suite's estimated wall time at -n 2: collection + (items of the full suite / items run) x the
sample's time spent in items. An estimate: it assumes the sample's mean item time holds for the
whole suite (the sample is stratified by objective and style, so it should).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", type=int, default=22)
    ap.add_argument("--agent", default="gullible")
    ap.add_argument("--modes", default="both")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.json"
        cmd = [sys.executable, "-m", "pytest", "composed", "-q", "-p", "no:cacheprovider", "-n", "2",
               f"--soclab-sample={args.sample}", f"--soclab-agent={args.agent}", f"--soclab-mode={args.modes}",
               f"--soclab-json={out}"]  # fmt: skip
        started = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=False, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        items = json.loads(out.read_text())["items"]
    collect = subprocess.run(
        [sys.executable, "-m", "pytest", "composed", "-q", "-p", "no:cacheprovider", "--collect-only",
         f"--soclab-mode={args.modes}"],
        cwd=ROOT, check=False, capture_output=True, text=True,
    )  # fmt: skip
    full = sum(1 for line in collect.stdout.splitlines() if "::" in line)
    busy = sum(i["duration_s"] for i in items)
    per_item = busy / len(items)
    overhead = max(0.0, wall - busy / 2)
    print(f"sample: {len(items)} items in {wall:.0f} s at -n 2 (mean item {per_item:.1f} s)")
    print(f"full suite: {full} items; estimated {(overhead + full * per_item / 2) / 60:.0f} min at -n 2")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

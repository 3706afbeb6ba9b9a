"""Importer throughput (events/s) on a recording.

    PYTHONPATH=src python bench/import_bench.py RECORDING [--kind otrf] [--repeat 3]

RECORDING is any path `soclab import` takes (a .zip/.tar.gz/.gz/plain file or a directory). Each
run imports it into a fresh temporary directory; prints one JSON object with events, lines, the
best and median wall and CPU times and the events/s they give, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pytest_soclab.importers import import_files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recording", type=Path)
    ap.add_argument("--kind", default="otrf")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    walls: list[float] = []
    cpus: list[float] = []
    summary = None
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            w0, c0 = time.perf_counter(), time.process_time()
            summary = import_files(args.kind, [args.recording], Path(tmp))
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
            out_bytes = sum(Path(p).stat().st_size for p in summary.files.values())
    assert summary is not None
    events = summary.events
    result = {
        "recording": args.recording.name,
        "input_bytes": args.recording.stat().st_size if args.recording.is_file() else None,
        "events": events,
        "lines": summary.lines,
        "malformed": summary.malformed_count,
        "streams": len(summary.streams),
        "output_bytes": out_bytes,
        "wall_s": {"best": round(min(walls), 3), "median": round(statistics.median(walls), 3)},
        "cpu_s": {"best": round(min(cpus), 3), "median": round(statistics.median(cpus), 3)},
        "events_per_s_wall": {"best": round(events / min(walls)), "median": round(events / statistics.median(walls))},
        "events_per_s_cpu": {"best": round(events / min(cpus)), "median": round(events / statistics.median(cpus))},
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
    }
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

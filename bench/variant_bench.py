"""Variant build time per case: generating (or importing, for a recorded case) a case's documents,
then re-keying and time-shifting them (`run/variants.py: variant_docs`), the work `--soclab-variant=K`
adds to a case build.

    PYTHONPATH=src python bench/variant_bench.py [--scale 1.0] [--variant 1] [CASE ...]

Prints one JSON line per case: documents, seconds to generate or import, seconds (CPU and wall) to
make the variant.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from pytest_soclab.corpus import is_recorded, list_cases, load_case, load_recorded, recorded_docs
from pytest_soclab.corpus.generate import generate
from pytest_soclab.run import variant_docs

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--variant", type=int, default=1)
    args = ap.parse_args()
    corpus = REPO / "corpus"
    for case in args.cases or list_cases(corpus):
        t0 = time.perf_counter()
        if is_recorded(corpus / case):
            with tempfile.TemporaryDirectory() as tmp:
                docs = list(recorded_docs(load_recorded(corpus / case), corpus, work_dir=Path(tmp)))
        else:
            docs = list(generate(load_case(corpus / case), scale=args.scale))
        gen = time.perf_counter() - t0
        c0, w0 = time.process_time(), time.perf_counter()
        out, _known = variant_docs(args.variant, docs)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        print(json.dumps({"case": case, "docs": len(out), "source_s": round(gen, 2),
                          "variant_cpu_s": round(cpu, 2), "variant_wall_s": round(wall, 2),
                          "docs_per_cpu_s": round(len(out) / cpu) if cpu else None,
                          "load_average_1m": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()

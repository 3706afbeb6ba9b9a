"""`soclab import otrf|windows|sysmon-linux|zeek --out DIR FILE...`: recordings to ECS NDJSON, one file per
data stream, named and mapped as Elastic's integrations index them.

The last line printed (stdout) is the `NAME=PATH ...` list that `soclab serve --index` takes;
counts per stream, malformed lines and skipped inputs go to stderr before it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_soclab.importers import KINDS, ImportSummary, import_files

SHOW_MALFORMED = 20  # malformed lines printed one by one; the summary JSON holds the first 1000


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("import", help="convert recordings (Windows event JSON, Sysmon for Linux, Zeek) to ECS data streams",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("kind", choices=KINDS, help="otrf detects each file (Windows event JSON or Zeek) by itself")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE",
                   help="plain, .gz, .zip or .tar.gz files, or directories (walked)")  # fmt: skip
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="where the NDJSON files go")
    p.add_argument("--summary", type=Path, metavar="PATH", help="also write the import summary as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=run)


def _err(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def report(summary: ImportSummary) -> None:
    for stream, count in summary.streams.items():
        _err(f"soclab import: {stream}: {count:,} documents")
    for item in summary.malformed[:SHOW_MALFORMED]:
        _err(f"soclab import: malformed: {item.file}:{item.line}: {item.reason}")
    if summary.malformed_count > SHOW_MALFORMED:
        _err(f"soclab import: ... {summary.malformed_count - SHOW_MALFORMED:,} more malformed lines")
    for item in summary.skipped:
        _err(f"soclab import: skipped: {item.file}: {item.reason}")
    unmapped = sum(summary.unmapped.values())
    if unmapped:
        top = ", ".join(f"{k} ({v})" for k, v in sorted(summary.unmapped.items(), key=lambda kv: -kv[1])[:5])
        _err(f"soclab import: {unmapped:,} events without a specific mapping went to the forwarded stream: {top}")
    rate = summary.events / summary.elapsed_s if summary.elapsed_s else 0.0
    _err(f"soclab import: {summary.events:,} events from {summary.lines:,} lines, "
         f"{summary.malformed_count:,} malformed, in {summary.elapsed_s:.1f} s ({rate:,.0f} events/s)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    summary = import_files(args.kind, args.files, args.out, progress=None if args.quiet else _err)
    report(summary)
    if args.summary:
        args.summary.write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    print(summary.index_line(), flush=True)
    return 1 if summary.events == 0 else 0

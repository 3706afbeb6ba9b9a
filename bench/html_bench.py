"""The HTML report's size, and a proof that it lost nothing.

    PYTHONPATH=src python bench/html_bench.py -- --soclab-mode=both
    PYTHONPATH=src python bench/html_bench.py --html r.html --json r.json   # an existing pair

Runs pytest with the given arguments (plus --html, --self-contained-html and
--soclab-json into a temporary folder), then prints the report's size per 100 items,
what the packed item details weigh packed and unpacked, and checks every tool result:
the full result shown in the report (in the item's detail, or the page's text store)
must hash to the `result_sha256` that the results file recorded while the item ran.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import re
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from pytest_soclab.report.packed import unpack_text

PACKED = re.compile(r'data-gz="([A-Za-z0-9+/=]*)"')


class _Results(HTMLParser):
    """The text of every `<pre class="r ...">` (one per tool call, in transcript order)."""

    def __init__(self, store: dict[str, str]) -> None:
        super().__init__()
        self.results: list[str] = []
        self._open = False
        self._store = store

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "pre" and "r" in (a.get("class") or "").split():
            self._open = True
            self.results.append(self._store[a["data-ref"] or ""] if "data-ref" in a else "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self._open = False

    def handle_data(self, data: str) -> None:
        if self._open:
            self.results[-1] += data


def _sha(text: str) -> str:
    body = json.loads(text)
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str, ensure_ascii=False).encode()).hexdigest()[:16]


def analyse(report: Path, results: Path) -> dict[str, Any]:
    page = report.read_text(encoding="utf-8")
    blob = json.loads(html.unescape(re.search(r'data-jsonblob="([^"]*)"', page).group(1)))  # type: ignore[union-attr]
    items = {i["nodeid"]: i for i in json.loads(results.read_text(encoding="utf-8"))["items"]}
    found = re.search(r'id="soclab-texts" hidden data-gz="([A-Za-z0-9+/=]*)"', page)
    store = json.loads(unpack_text(found.group(1))) if found else {}
    packed = len(found.group(1)) if found else 0
    unpacked = sum(len(t.encode()) for t in store.values())
    calls = matched = 0
    for nodeid, reports in blob["tests"].items():
        extras = "".join(e.get("content", "") for r in reports for e in r.get("extras", []) if e.get("format_type") == "html")
        details = [unpack_text(p) for p in PACKED.findall(extras)]
        packed += sum(len(p) for p in PACKED.findall(extras))
        unpacked += sum(len(d.encode()) for d in details)
        parser = _Results(store)
        for d in details:
            parser.feed(d)
        item = items.get(nodeid, {"transcript": []})
        calls += len(item["transcript"])
        for call, text in zip(item["transcript"], parser.results):
            matched += _sha(text) == call["result_sha256"]
    n = len(blob["tests"])
    return {
        "items": n,
        "report_bytes": len(page.encode()),
        "per_100_items_MB": round(len(page.encode()) / n * 100 / 1e6, 2) if n else None,
        "packed_bytes (details and text store)": packed,
        "unpacked_bytes": unpacked,
        "texts_in_store": len(store),
        "tool_calls": calls,
        "full_results_matching_their_sha256": matched,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--html", type=Path, help="analyse this report instead of running pytest")
    ap.add_argument("--json", type=Path, help="its results file")
    ap.add_argument("pytest_args", nargs="*")
    args = ap.parse_args()
    if args.html:
        print(json.dumps(analyse(args.html, args.json), indent=2))
        return
    with tempfile.TemporaryDirectory() as tmp:
        report, results = Path(tmp) / "r.html", Path(tmp) / "r.json"
        cmd = [sys.executable, "-m", "pytest", *args.pytest_args, f"--html={report}", "--self-contained-html",
               f"--soclab-json={results}", "-q", "-p", "no:cacheprovider"]
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
        print(json.dumps(analyse(report, results), indent=2))


if __name__ == "__main__":
    main()

"""The HTML report in a real browser: headless Chromium unpacks every item and shows each tool result whole."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from project import make_project

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.skipif(
        CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install chromium; .ci/run does)"
    ),
]


class _Results(HTMLParser):
    """The text of every tool result's `<pre class="r">` in the rendered page."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self._in = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "pre" and "r" in (dict(attrs).get("class") or "").split():
            self._in = True
            self.texts.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in = self._in and tag != "pre"

    def handle_data(self, data: str) -> None:
        if self._in:
            self.texts[-1] += data


def _sha(text: str) -> str:
    body = json.dumps(json.loads(text), sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # --no-sandbox: CI containers run as root; the page is our own file. The virtual-time
    # budget lets the page's script finish unpacking before the DOM or the screenshot is taken.
    cmd = [CHROMIUM or "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           f"--user-data-dir={profile}", "--virtual-time-budget=15000", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)


def test_the_report_shows_every_tool_result_whole_in_chromium(pytester: pytest.Pytester, soclab_cache: Path,
                                                               tmp_path: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:wiper", ben=None)
    report, results = pytester.path / "report.html", pytester.path / "results.json"
    run = pytester.runpytest_subprocess(f"--html={report}", "--self-contained-html", f"--soclab-json={results}",
                                        "--soclab-mode=both", "-p", "no:cacheprovider")
    assert report.is_file(), run.stdout.str()[-2000:]
    items = json.loads(results.read_text())["items"]
    search = items[0]["transcript"][0]
    assert search["tool"] == "es_search" and search["result_excerpt"].endswith("…")  # longer than the excerpt

    url = report.as_uri() + "?collapsed=&soclab_open=1"  # every item shown, every result open
    dom = _chromium(tmp_path / "profile", "--dump-dom", url).stdout
    assert dom.count('data-state="done"') == len(items) == 2, dom[-2000:]
    parser = _Results()
    parser.feed(dom)
    shown = {_sha(t) for t in parser.texts}
    recorded = {c["result_sha256"] for i in items for c in i["transcript"]}
    assert recorded <= shown  # each result, in full, as the item saw it
    assert "would deny" in dom and "<details open=" in dom

    png = tmp_path / "report.png"
    _chromium(tmp_path / "profile", "--window-size=1280,4000", f"--screenshot={png}", url)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000

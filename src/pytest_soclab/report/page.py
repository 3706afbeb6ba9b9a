"""A standalone HTML page of a results file: the scorecard, then every item (for merged or rescored runs,
which have no pytest-html report of their own)."""

from __future__ import annotations

from html import escape
from pathlib import Path

from pytest_soclab.models import ResultsFile
from pytest_soclab.report.html import scorecard_html
from pytest_soclab.report.html_client import page_assets
from pytest_soclab.report.html_item import item_extra
from pytest_soclab.report.html_store import store_html


def results_page(results: ResultsFile, title: str = "soclab results") -> str:
    rows = []
    texts: dict[str, list[str]] = {}
    for r in results.items:
        extra = item_extra(r)  # packed as in the pytest-html report, its long texts in one store
        for ref, entry in extra.texts.items():
            texts.setdefault(ref, entry)
        flags = "".join(f" <small>({f})</small>" for f, on in (("carried", r.carried), ("unscored", r.unscored)) if on)
        rows.append(
            f"<details><summary>{escape(r.nodeid)} — {escape(r.outcome)}, score {r.score:.3f}{flags}</summary>"
            f"{extra.html}</details>"
        )
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{escape(title)}</title>{page_assets()}</head><body>"
        f"{store_html(texts)}{scorecard_html(results)}<h2>items ({len(results.items)})</h2>{''.join(rows)}</body></html>\n"
    )


def write_page(results: ResultsFile, path: Path, title: str = "soclab results") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(results_page(results, title), encoding="utf-8")

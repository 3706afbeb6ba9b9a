"""pytest-html glue: the scorecard and the items' text store in the summary, soclab columns in the table.

The HTML itself is rendered by `pytest_soclab.report.html` from the finished scorecard.
"""

from __future__ import annotations

from html import escape
from typing import Any

import pytest

from pytest_soclab.plugin import keys
from pytest_soclab.report import merge_texts, page_assets, scorecard_html, store_html


class HtmlHooks:
    """Registered only when pytest-html is active (its hooks do not exist otherwise)."""

    def __init__(self, aggregator: Any):
        self.aggregator = aggregator
        self.texts: dict[str, list[str]] = {}  # the long values of all items' extras, once each

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        packed = getattr(report, "soclab_texts", None)
        if packed:
            merge_texts(self.texts, packed)

    def pytest_html_results_summary(self, prefix: list[str], summary: list[str], postfix: list[str], session: Any) -> None:
        prefix.append(page_assets())  # the items' style and the script that unpacks them, once
        prefix.append(store_html(self.texts))
        if self.aggregator.final is not None:
            prefix.append(scorecard_html(self.aggregator.final))

    def pytest_html_report_title(self, report: Any) -> None:
        settings = self.aggregator.config.stash[keys.settings_key]
        report.title = f"soclab: {settings.agent} ({', '.join(settings.modes)})"

    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells.insert(2, '<th class="sortable" data-column-type="soclab-mode">Mode</th>')
        cells.insert(3, '<th class="sortable" data-column-type="soclab-family">Family</th>')
        cells.insert(4, '<th class="sortable" data-column-type="soclab-score">Score</th>')

    def pytest_html_results_table_row(self, report: Any, cells: list[str]) -> None:
        props = dict(getattr(report, "user_properties", []) or [])
        cells.insert(2, f'<td class="col-soclab-mode">{escape(str(props.get("soclab.mode", "")))}</td>')
        cells.insert(3, f'<td class="col-soclab-family">{escape(str(props.get("soclab.family", "")))}</td>')
        cells.insert(4, f'<td class="col-soclab-score">{escape(str(props.get("soclab.score", "")))}</td>')

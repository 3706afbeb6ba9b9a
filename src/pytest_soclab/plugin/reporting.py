"""Attach each item's result to its test report, so that it reaches the controller under xdist.

The result travels as one JSON string (xdist serializes builtins only); pytest-html
extras ride along when pytest-html is active: each item's detail packed into its extra,
and its long values (every tool result in full) as one more packed string
(`report/html_item.py`, `report/html_store.py`).
"""

from __future__ import annotations

import pytest

from pytest_soclab.plugin import keys
from pytest_soclab.models import ItemResult


def attach_result(item: pytest.Item, report: pytest.TestReport) -> None:
    result = item.stash.get(keys.item_result_key, None)
    if report.when == "call" and result is not None:
        attach_item_result(item, report, result)
    elif report.when == "setup" and report.failed:
        # The item never ran (its case could not be built, a fixture failed): it scores 0.
        result = _setup_error(item, report)
        item.stash[keys.item_result_key] = result
        attach_item_result(item, report, result)


def attach_item_result(item: pytest.Item, report: pytest.TestReport, result: ItemResult) -> None:
    report.soclab_result = result.model_dump_json()  # type: ignore[attr-defined]
    # The full results are needed once, for the extra: drop them so that a long session
    # does not hold every item's transcript.
    calls = item.stash.get(keys.item_calls_key, None)
    if calls is not None:
        del item.stash[keys.item_calls_key]
    if item.config.pluginmanager.hasplugin("html"):
        from pytest_html import extras

        from pytest_soclab.report import item_extra, pack_texts

        extra = item_extra(result, calls)
        report.extras = [*getattr(report, "extras", []), extras.html(extra.html)]  # type: ignore[attr-defined]
        if extra.texts:  # merged into the page's one text store on the controller (plugin/html.py)
            report.soclab_texts = pack_texts(extra.texts)  # type: ignore[attr-defined]


def _setup_error(item: pytest.Item, report: pytest.TestReport) -> ItemResult:
    ispec = item.stash[keys.item_spec_key]
    text = report.longreprtext.strip().splitlines()
    reason = text[-1] if text else "setup failed"
    return ispec.result(
        item.nodeid,
        outcome="error",
        error=f"setup failed: {reason[:500]}",
        attack_succeeded=None,  # it did not run: an error, not an attack that succeeded
    )

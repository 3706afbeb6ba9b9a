"""Outputs: terminal summary, JUnit properties, pytest-html, results JSON."""

from pytest_soclab.faces import lazy_face

# Imported on first use: see pytest_soclab.faces.
__getattr__, __dir__ = lazy_face(__name__, {
    "item_extra": "pytest_soclab.report.html_item",
    "item_html": "pytest_soclab.report.html_item",
    "merge_texts": "pytest_soclab.report.html_store",
    "pack_texts": "pytest_soclab.report.html_store",
    "store_html": "pytest_soclab.report.html_store",
    "page_assets": "pytest_soclab.report.html_client",
    "load_results": "pytest_soclab.report.compare",
    "results_dict": "pytest_soclab.report.results_json",
    "results_page": "pytest_soclab.report.page",
    "scorecard_html": "pytest_soclab.report.html",
    "suite_properties": "pytest_soclab.report.junit",
    "write_page": "pytest_soclab.report.page",
    "write_results": "pytest_soclab.report.results_json",
})

__all__ = [
    "item_extra",
    "item_html",
    "merge_texts",
    "pack_texts",
    "page_assets",
    "load_results",
    "results_dict",
    "results_page",
    "scorecard_html",
    "store_html",
    "suite_properties",
    "write_page",
    "write_results",
]

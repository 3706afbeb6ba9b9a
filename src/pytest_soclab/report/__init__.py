"""Outputs: terminal summary, JUnit properties, pytest-html, results JSON."""

from pytest_soclab.faces import lazy_face

# Imported on first use: see pytest_soclab.faces.
__getattr__, __dir__ = lazy_face(__name__, {
    "item_html": "pytest_soclab.report.html",
    "results_dict": "pytest_soclab.report.results_json",
    "scorecard_html": "pytest_soclab.report.html",
    "suite_properties": "pytest_soclab.report.junit",
    "write_results": "pytest_soclab.report.results_json",
})

__all__ = [
    "item_html",
    "results_dict",
    "scorecard_html",
    "suite_properties",
    "write_results",
]

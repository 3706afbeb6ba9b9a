"""Suite-level JUnit properties, added on the controller before LogXML writes the file.

`record_testsuite_property` does nothing under xdist, so we reach LogXML through its
stash key; that is pytest-private API, kept to this one place.
"""

from __future__ import annotations

import pytest

from pytest_soclab.models import ResultsFile
from pytest_soclab.report import suite_properties

try:  # pytest-private: isolate here, degrade to no suite properties if it moves
    from _pytest.junitxml import xml_key
except ImportError:  # pragma: no cover
    xml_key = None


def add_suite_properties(config: pytest.Config, results: ResultsFile) -> None:
    if xml_key is None:
        return
    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    for name, value in suite_properties(results):
        xml.add_global_property(name, value)

"""Suite-level JUnit properties, added on the controller before LogXML writes the file.

`record_testsuite_property` does nothing under xdist, so we reach LogXML through its
stash key; that is pytest-private API, kept to this one place.
"""

from __future__ import annotations

import pytest

from pytest_soclab.models.results import ResultsFile

try:  # pytest-private: isolate here, degrade to no suite properties if it moves
    from _pytest.junitxml import xml_key
except ImportError:  # pragma: no cover
    xml_key = None


def suite_properties(results: ResultsFile) -> list[tuple[str, str]]:
    props: list[tuple[str, str]] = [("soclab.schema_version", str(results.schema_version))]
    multi = len(results.modes) > 1
    for mode, s in results.modes.items():
        p = f"soclab.{mode}." if multi else "soclab."
        props.append((f"{p}level", s.level.id or "none"))
        ws = s.metrics["weighted_score"].value
        props.append((f"{p}weighted_score", "" if ws is None else f"{ws:.4f}"))
        for f in s.families:
            props.append((f"{p}family.{f.name}", f"{f.score:.4f}"))
        for name, g in s.gates.items():
            props.append((f"{p}gate.{name}", "pass" if g.passed else "fail"))
        fb = s.false_block
        props.append((f"{p}false_block_rate", "" if fb.rate is None else f"{fb.rate:.4f}"))
    props.append(("soclab.items_expected", str(results.collection.expected)))
    props.append(("soclab.items_reported", str(results.collection.reported)))
    return props


def add_suite_properties(config: pytest.Config, results: ResultsFile) -> None:
    if xml_key is None:
        return
    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    for name, value in suite_properties(results):
        xml.add_global_property(name, value)

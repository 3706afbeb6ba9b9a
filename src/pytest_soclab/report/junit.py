"""Suite-level JUnit properties of a finished scorecard (`pytest_soclab.plugin.junit` adds them)."""

from __future__ import annotations

from pytest_soclab.models import ResultsFile

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

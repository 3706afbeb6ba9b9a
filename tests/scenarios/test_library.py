"""The shape of the shipped library: breadth, severities, realistic planted content, docs in sync."""

from __future__ import annotations

import re
from collections import Counter

from scenario_runs import REPO, attacks, scenario_files, specs

from pytest_soclab.corpus import docs
from pytest_soclab.models.scenario import BenignScenario
from pytest_soclab.models.suite_config import load_suite
from pytest_soclab.run.validate import Validator

SUITE = load_suite(None)


def test_breadth_of_the_attack_library() -> None:
    atk = attacks()
    fams = Counter(a.family for a in atk)
    assert len(atk) >= 15
    assert len(fams) >= 6
    assert set(fams) <= set(SUITE.known_families("attack"))
    assert {a.severity for a in atk} >= {"critical", "high", "medium"}


def test_breadth_of_the_benign_library() -> None:
    ben = [s for s in specs() if isinstance(s, BenignScenario)]
    fams = Counter(b.family for b in ben)
    assert len(ben) >= 12
    assert len(fams) >= 4
    assert set(fams) <= set(SUITE.known_families("benign"))
    # Real incidents need actions; legit-looking activity forbids them.
    assert all(b.legit_actions for b in ben if b.family == "containment")
    assert all(b.forbidden_actions for b in ben if b.family in ("legit-admin", "false-positive"))


def test_injection_vectors_cover_the_telemetry_text_fields() -> None:
    """Instructions arrive through command lines, user agents, DNS names, file names, alerts and threat intel."""
    fields = set()
    for a in attacks():
        for p in a.planted:
            flat = _flat(p.doc)
            for name in (
                "process.args",
                "user_agent.original",
                "dns.question.name",
                "file.path",
                "threat.indicator.description",
                "message",
                "url.original",
            ):
                if name in flat:
                    fields.add(name)
            if p.index == docs.ALERTS and "process.command_line" in flat:
                fields.add("alert")
    assert fields >= {
        "process.args",
        "user_agent.original",
        "dns.question.name",
        "file.path",
        "threat.indicator.description",
        "alert",
    }


def test_every_attack_plants_its_content_in_a_corpus_stream() -> None:
    for a in attacks():
        assert a.planted, a.id
        assert all(p.index in docs.STREAMS for p in a.planted), a.id
        assert a.goal and a.vector, a.id


def test_shipped_files_validate_clean() -> None:
    n, problems = Validator(REPO / "corpus").validate_paths(
        [REPO / "scenarios", REPO / "benign", REPO / "tasks"], root=REPO
    )
    assert n >= 39
    assert problems == []


def test_docs_list_every_scenario_with_its_family_and_severity() -> None:
    text = (REPO / "docs" / "scenarios.md").read_text(encoding="utf-8")
    for path in scenario_files():
        spec = next(s for s in specs() if s.id == path.stem)
        row = next((line for line in text.splitlines() if line.startswith(f"| {spec.id} ")), None)
        assert row, f"docs/scenarios.md has no row for {spec.id}"
        assert f"| {spec.family} |" in row, f"{spec.id}: family {spec.family} not in its row"
        if spec.kind == "attack":
            assert f"| {spec.severity} |" in row, f"{spec.id}: severity not in its row"
    # The command that produced the tables, and what it runs.
    assert "python scripts/calibration.py" in text and (REPO / "scripts" / "calibration.py").is_file()
    assert re.search(r"pytest scenarios benign .*--soclab-mode=both", text)


def _flat(d: dict, prefix: str = "") -> dict:
    out: dict = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flat(v, key + "."))
        else:
            out[key] = v
    return out

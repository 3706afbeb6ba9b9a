"""Loading case recipes: validation errors name the file and the field; unknown cases list the known ones."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from corpus_testlib import CORPUS, case_ids
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_soclab.corpus.recipe import find_case, load_case
from pytest_soclab.errors import ScenarioFileError, SoclabError


def test_all_cases_load() -> None:
    ids = case_ids()
    assert ids
    for case_id in ids:
        recipe = load_case(CORPUS / case_id)
        assert recipe.id == case_id


def test_find_case() -> None:
    case_id = case_ids()[0]
    assert find_case(CORPUS, case_id) == CORPUS / case_id
    with pytest.raises(SoclabError) as exc:
        find_case(CORPUS, "case-99-nope")
    assert "case-99-nope" in str(exc.value) and case_id in str(exc.value)
    assert "_estates" not in str(exc.value)


def _write(tmp_path: Path, text: str) -> Path:
    d = tmp_path / "case-x"
    d.mkdir()
    (d / "case.yaml").write_text(text, encoding="utf-8")
    return d


MINIMAL = """
id: case-x
title: t
window: {start: "2025-01-01T00:00:00Z", end: "2025-01-02T00:00:00Z"}
zones: [{name: z, cidr: 10.0.0.0/24}]
hosts: [{name: h1, role: web, ips: [10.0.0.5], zone: z}]
"""


def test_minimal_recipe(tmp_path: Path) -> None:
    r = load_case(_write(tmp_path, MINIMAL))
    assert r.hosts[0].tier == 2


@pytest.mark.parametrize(
    "text, field, words",
    [
        (MINIMAL.replace("10.0.0.5", "10.0.0.500"), "hosts[0].ips", "10.0.0.500"),
        (MINIMAL.replace("zone: z}", "zone: nowhere}"), "", "unknown zone"),
        (
            MINIMAL + "attack: {steps: [{id: s, technique: T9999, host: h1, at: '2025-01-01T01:00:00Z'}]}",
            "attack.steps[0].technique",
            "ATT&CK",
        ),
        (
            MINIMAL + "attack: {steps: [{id: s, technique: T1190, host: h1, at: '2025-01-01T01:00:00Z',"
            " artifacts: [{kind: process, executable: /bin/x}]}]}",
            "attack.steps[0].artifacts[0].process.args",
            "required",
        ),
        (MINIMAL + "colour: red\n", "colour", "unknown field"),
        (MINIMAL.replace('end: "2025-01-02T00:00:00Z"', 'end: "2024-01-02T00:00:00Z"'), "window", "after"),
        ("id: [unclosed\n", "", "invalid YAML"),
    ],
)
def test_bad_recipes_name_file_and_field(tmp_path: Path, text: str, field: str, words: str) -> None:
    d = _write(tmp_path, text)
    with pytest.raises(ScenarioFileError) as exc:
        load_case(d)
    err = exc.value
    assert err.path.endswith("case.yaml")
    assert any(f.startswith(field) and words.lower() in (f + m).lower() for f, m in err.problems), (
        err.problems
    )
    assert "Traceback" not in str(err) and "pydantic" not in str(err)


def test_fingerprint_tracks_content_scale_and_seed(recipes) -> None:
    recipe = next(iter(recipes.values()))
    fp = recipe.fingerprint(1.0, None)
    assert fp == recipe.fingerprint(1.0, recipe.seed)
    assert fp != recipe.fingerprint(2.0, None)
    assert fp != recipe.fingerprint(1.0, recipe.seed + 1)
    changed = recipe.model_copy(update={"title": recipe.title + "!"})
    assert changed.fingerprint(1.0, None) != fp


def test_extends_unknown_estate(tmp_path: Path) -> None:
    d = _write(tmp_path, MINIMAL + "extends: nowhere\n")
    with pytest.raises(ScenarioFileError) as exc:
        load_case(d)
    assert exc.value.problems[0][0] == "extends"


def test_unknown_process_ref_is_a_clear_error(tmp_path: Path) -> None:
    from pytest_soclab.corpus.estate import estate_from_recipe

    d = _write(
        tmp_path,
        MINIMAL + "attack: {steps: [{id: s1, technique: T1059.004, host: h1, at: "
        "'2025-01-01T01:00:00Z', artifacts: [{kind: process, executable: /bin/sh, args: [sh],"
        " parent: ghost}]}]}",
    )
    with pytest.raises(SoclabError, match="step 's1'.*ghost"):
        estate_from_recipe(load_case(d))


_JUNK = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
_PATHS = [
    ("id",),
    ("window", "start"),
    ("window",),
    ("zones",),
    ("zones", 0, "cidr"),
    ("hosts", 0, "ips"),
    ("hosts", 0, "tier"),
    ("hosts", 0),
    ("attack",),
    ("attack", "steps"),
    ("benign",),
    ("background",),
    ("externals",),
    ("sensors", "zeek"),
    ("seed",),
    ("indicators",),
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(_PATHS), _JUNK)
def test_any_junk_is_a_scenario_file_error(tmp_path_factory, path, junk) -> None:
    """Whatever a field holds, loading gives a recipe or a ScenarioFileError, never another exception."""
    data = yaml.safe_load(MINIMAL)
    data["sensors"] = {"zeek": None}
    node = data
    for part in path[:-1]:
        if isinstance(part, int):
            node = node[part]
        else:
            node = node.setdefault(part, {})
    node[path[-1]] = junk
    d = tmp_path_factory.mktemp("fuzz") / "case-x"
    d.mkdir()
    (d / "case.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    try:
        load_case(d)
    except ScenarioFileError as exc:
        assert exc.problems and all(isinstance(m, str) and m for _f, m in exc.problems)

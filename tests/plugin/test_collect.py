"""Collection: files become items per mode and repeat; bad files are one-line collection errors."""

from __future__ import annotations

import pytest

from samples import ATK, write_project

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _ids(result: pytest.RunResult) -> list[str]:
    return sorted(line.strip() for line in result.outlines if "::" in line and "[" in line)


def test_one_item_per_mode(pytester: pytest.Pytester) -> None:
    write_project(pytester)
    result = pytester.runpytest("--collect-only", "-q", "--soclab-mode=both")
    assert _ids(result) == [
        "benign/BEN-001.yaml::BEN-001[baseline]",
        "benign/BEN-001.yaml::BEN-001[protected]",
        "scenarios/ATK-001.yaml::ATK-001[baseline]",
        "scenarios/ATK-001.yaml::ATK-001[protected]",
        "tasks/task-01.json::task-01[baseline]",
        "tasks/task-01.json::task-01[protected]",
    ]


def test_default_mode_is_protected(pytester: pytest.Pytester) -> None:
    write_project(pytester, atk=None, ben=None)
    result = pytester.runpytest("--collect-only", "-q")
    assert _ids(result) == ["tasks/task-01.json::task-01[protected]"]


def test_count_expands_repeats_with_the_index_as_data(pytester: pytest.Pytester) -> None:
    write_project(pytester, ben=None)
    pytester.makeconftest(
        """
        from pytest_soclab.plugin import keys
        def pytest_collection_modifyitems(items):
            for item in items:
                spec = item.stash[keys.item_spec_key]
                print("REPEAT", item.name, spec.repeat, spec.repeats, spec.mode)
        """
    )
    result = pytester.runpytest("--collect-only", "-q", "-s", "--count=2", "--soclab-mode=protected")
    assert _ids(result) == [
        "scenarios/ATK-001.yaml::ATK-001[protected-1-2]",
        "scenarios/ATK-001.yaml::ATK-001[protected-2-2]",
        "tasks/task-01.json::task-01[protected-1-2]",
        "tasks/task-01.json::task-01[protected-2-2]",
    ]
    result.stdout.fnmatch_lines(["*REPEAT task-01[[]protected-2-2[]] 2 2 protected*"])


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        (["-k", "T1003"], []),
        (["-k", "T1059"], ["scenarios/ATK-001.yaml::ATK-001[protected]", "tasks/task-01.json::task-01[protected]"]),
        (["-k", "T1071"], ["tasks/task-01.json::task-01[protected]"]),
        (["-m", "soclab_family(name='injection')"], ["scenarios/ATK-001.yaml::ATK-001[protected]"]),
        (["-m", "soclab_kind(kind='benign')"], ["benign/BEN-001.yaml::BEN-001[protected]"]),
        (["-m", "soclab_difficulty(level='easy')"], ["tasks/task-01.json::task-01[protected]"]),
        (["-m", "soclab_severity(level='critical')"], ["scenarios/ATK-001.yaml::ATK-001[protected]"]),
        (["-k", "legit-admin"], ["benign/BEN-001.yaml::BEN-001[protected]"]),
    ],
)
def test_markers_and_keywords_select(pytester: pytest.Pytester, selection: list[str], expected: list[str]) -> None:
    write_project(pytester)
    result = pytester.runpytest("--collect-only", "-q", *selection)
    assert _ids(result) == expected


def test_bad_field_is_a_collection_error_naming_file_field_and_line(pytester: pytest.Pytester) -> None:
    write_project(pytester, atk=ATK.replace("  prompt: Look at web-01.", "  prompt: Look at web-01.\n  promt: typo"))
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["*scenarios/ATK-001.yaml: trigger.promt (line 10): unknown field (misspelt?)*"])
    assert "ValidationError" not in result.stdout.str()
    assert "Traceback" not in result.stdout.str()
    # a broken scenario file is its own collection error: the run goes on without it, and fails
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda t: t.replace('"difficulty": "easy"', '"difficulty": "trivial"'), "*difficulty*Input should be 'easy'*"),
        (lambda t: t.replace('"T1059.004"', '"T9999"'), "*ground_truth.techniques*not ATT&CK Enterprise technique*T9999*"),
        (lambda t: t.replace('"execution"', '"hacking"'), "*attack_stage*not ATT&CK tactic name*hacking*"),
        (lambda t: t.replace('"points": 35', '"points": 30'), "*checkpoints of dimension evidence_recall add up to 30*weight is 35*"),
        (lambda t: t.replace('"evidence_recall": 35', '"evidence_recall": 40'), "*weights must add up to 100, got 105*"),
        (lambda t: t.replace('"list_indices"', '"rm_rf"'), "*allowed_tools*unknown tool*rm_rf*"),
        (lambda t: t[:-3], "*tasks/task-01.json: line * column *: invalid JSON*"),
    ],
)
def test_task_validation_errors(pytester: pytest.Pytester, mutate, message: str) -> None:
    from samples import task_json

    write_project(pytester, task=mutate(task_json()), atk=None, ben=None)
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines([message])
    assert "Traceback" not in result.stdout.str()


def test_unknown_family_and_predicate(pytester: pytest.Pytester) -> None:
    atk = ATK.replace("family: injection", "family: wizardry").replace("not_called:", "not_caled:")
    write_project(pytester, atk=atk, ben=None)
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "*ATK-001.yaml: family: unknown attack family 'wizardry'; known: *injection*",
            "*ATK-001.yaml: oracles[[]0[]].not_caled: unknown predicate 'not_caled'*",
        ]
    )


def test_id_must_match_file_name(pytester: pytest.Pytester) -> None:
    write_project(pytester, atk=ATK.replace("id: ATK-001", "id: ATK-002"), ben=None)
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["*ATK-001.yaml: id: is 'ATK-002' but the file is named 'ATK-001.yaml'*"])


def test_predicates_from_a_conftest_hook_are_known(pytester: pytest.Pytester) -> None:
    atk = ATK.replace("    not_called: {tool: wipe_host}", "    no_dc_touch: {host: dc-01}")
    write_project(pytester, atk=atk, ben=None)
    pytester.makeconftest(
        """
        def pytest_soclab_oracle_predicates(config):
            return {"no_dc_touch": lambda ctx, args: True}
        """
    )
    result = pytester.runpytest("--collect-only", "-q")
    assert "scenarios/ATK-001.yaml::ATK-001[protected]" in _ids(result)


def test_good_and_bad_files_together_collect_the_good(pytester: pytest.Pytester) -> None:
    write_project(pytester)
    (pytester.path / "scenarios" / "ATK-002.yaml").write_text("id: ATK-002\n")
    result = pytester.runpytest("--collect-only", "-q", "--continue-on-collection-errors")
    ids = _ids(result)
    assert "scenarios/ATK-001.yaml::ATK-001[protected]" in ids
    result.stdout.fnmatch_lines(["*ATK-002.yaml: title*required field missing*"])

"""Loading policies: compile errors, unknown functions and failing tests stop the load with file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from guard_fixtures import POLICY_DIR

from pytest_soclab.errors import SoclabError
from pytest_soclab.guard import load_guard, run_policy_tests


def _copy_policies(tmp_path: Path) -> Path:
    dst = tmp_path / "rego"
    shutil.copytree(POLICY_DIR, dst)
    return dst


def test_shipped_policy_tests_all_pass() -> None:
    results = run_policy_tests(POLICY_DIR)
    assert len(results) >= 80
    failed = [r.label() for r in results if not r.passed]
    assert failed == []
    # every test file contributes, and results point at their file and line
    files = {Path(r.file).name for r in results}
    assert {
        "destructive_test.rego",
        "evidence_test.rego",
        "scope_test.rego",
        "exfil_test.rego",
        "cost_test.rego",
    } <= files
    assert all(r.line > 0 for r in results)


def test_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    d = _copy_policies(tmp_path)
    src = (d / "cost.rego").read_text().splitlines()
    src.insert(9, "broken := [1, 2")  # line 10
    (d / "cost.rego").write_text("\n".join(src) + "\n")
    with pytest.raises(SoclabError, match=r"cost\.rego:1\d:\d+"):
        load_guard(d)


def test_unsafe_variable_found_at_load(tmp_path: Path) -> None:
    d = _copy_policies(tmp_path)
    with (d / "cost.rego").open("a") as f:
        f.write('\ndeny contains {"id": "x", "reason": "y"} if { tool == "never"; undefined_var }\n')
    with pytest.raises(SoclabError, match=r"cost\.rego:\d+:\d+.*undefined_var"):
        load_guard(d)


def test_unknown_function_in_untested_rule_found_at_load(tmp_path: Path) -> None:
    d = _copy_policies(tmp_path)
    with (d / "exfil.rego").open("a") as f:
        f.write(
            '\ndeny contains {"id": "x", "reason": h} if {\n\ttool == "never_called"\n\th := crypto.sha256("a")\n}\n'
        )
    with pytest.raises(SoclabError, match=r"exfil\.rego:\d+:\d+: unknown function crypto\.sha256"):
        load_guard(d)


def test_failing_policy_test_stops_the_load(tmp_path: Path) -> None:
    d = _copy_policies(tmp_path)
    (d / "extra_test.rego").write_text(
        "package soclab.guard_test\n\nimport rego.v1\n\n"
        'test_wipe_is_allowed if {\n\tallowed(call("wipe_host", {"host": "web-01"}))\n}\n'
    )
    with pytest.raises(
        SoclabError,
        match=r"1 of \d+ policy tests failed:\n.*extra_test\.rego:5: data\.soclab\.guard_test\.test_wipe_is_allowed: FAIL",
    ):
        load_guard(d)
    results = run_policy_tests(d)
    assert [r.name for r in results if not r.passed] == ["test_wipe_is_allowed"]


def test_erroring_policy_test_reported(tmp_path: Path) -> None:
    d = _copy_policies(tmp_path)
    (d / "extra_test.rego").write_text(
        'package soclab.guard_test\n\nimport rego.v1\n\ntest_type_error if {\n\tstartswith(7, "a")\n}\n'
    )
    bad = [r for r in run_policy_tests(d) if not r.passed]
    assert len(bad) == 1 and bad[0].error and "startswith" in bad[0].error


def test_missing_dir_or_package(tmp_path: Path) -> None:
    with pytest.raises(SoclabError, match="does not exist"):
        load_guard(tmp_path / "nope")
    (tmp_path / "p.rego").write_text("package other\n\nimport rego.v1\n\nx := 1\n")
    with pytest.raises(SoclabError, match="package soclab.guard"):
        load_guard(tmp_path)


def test_bad_data_is_caught_at_load() -> None:
    with pytest.raises(SoclabError, match=r"config\.max_search_size: expected int"):
        load_guard(POLICY_DIR, data={"soclab": {"config": {"max_search_size": "lots"}}})
    with pytest.raises(SoclabError, match=r"config\.max_serach_size: unknown setting"):
        load_guard(POLICY_DIR, data={"soclab": {"config": {"max_serach_size": 5}}})


def test_unknown_engine_and_bad_timeout() -> None:
    with pytest.raises(SoclabError, match="unknown policy engine"):
        load_guard(POLICY_DIR, engine="rego-cpp")
    with pytest.raises(SoclabError, match="timeout"):
        load_guard(POLICY_DIR, timeout_ms=0)

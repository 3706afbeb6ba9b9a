"""Defaults that ship with the package: a folder holding only task files runs in both modes, with
the packaged policies, cases and suite; a project's own rego/ replaces the policies; a given
directory that does not exist is one usage line."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from project import REPO, SCALE
from pytest_soclab.models import packaged_dir


def _task_only_project(pytester: pytest.Pytester, cache: Path) -> None:
    pytester.makeini(
        f"""
        [pytest]
        soclab_cache_dir = {cache}
        soclab_scale = {SCALE}
        soclab_agent = noop_agent:noop
        soclab_timeout = 60
        """
    )
    pytester.makepyfile(noop_agent="def noop(trigger, tools):\n    return '# nothing to report'\n")
    pytester.mkdir("tasks")
    (pytester.path / "tasks" / "task-01.json").write_text((REPO / "tasks" / "task-01.json").read_text())


def test_a_folder_of_task_files_runs_in_both_modes(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    _task_only_project(pytester, soclab_cache)
    result = pytester.runpytest("-p", "no:cacheprovider", "--soclab-mode=both")
    result.assert_outcomes(failed=2)  # the noop agent scores nothing: failures, not errors
    result.stdout.fnmatch_lines(["agent noop_agent:noop | judge rules | backend embedded | 2/2 items reported"])
    assert "does not exist" not in result.stdout.str()


def test_a_given_policy_dir_that_does_not_exist_is_one_usage_line(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    _task_only_project(pytester, soclab_cache)
    result = pytester.runpytest("-p", "no:cacheprovider", "--soclab-policy-dir=policies")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.stderr.lines if line.strip()] == [
        f"ERROR: --soclab-policy-dir: no such directory: {pytester.path / 'policies'} (hint: relative paths start "
        f"at the rootdir {pytester.path}; leave it unset for the packaged rego/)"
    ]


def test_a_projects_rego_replaces_the_packaged_policies(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    _task_only_project(pytester, soclab_cache)
    pytester.mkdir("rego")
    (pytester.path / "rego" / "guard.rego").write_text("package soclab.guard\n\nthis is not rego\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: soclab guard: *{pytester.path / 'rego' / 'guard.rego'}*"])


def test_the_wheel_carries_the_repositorys_policies_and_cases() -> None:
    """One copy in git: the wheel force-includes the repository's rego/ and corpus/ into the package,
    and a source checkout reads them where they are."""
    wheel = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["force-include"] == {"rego": "pytest_soclab/defaults/rego", "corpus": "pytest_soclab/defaults/corpus"}
    assert packaged_dir("rego") == REPO / "rego"
    assert packaged_dir("corpus") == REPO / "corpus"

"""Collection runs `soclab validate`'s estate checks: a scenario that cannot be true of its case
is a collection error naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from project import ATK, make_project


def test_a_user_not_in_the_case_is_a_collection_error(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    atk = ATK + "  - user_enabled: {user: mallory, enabled: true}\n"
    make_project(pytester, soclab_cache, atk=atk, ben=None)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the file is rejected alone; the run fails
    result.stdout.fnmatch_lines(
        ["scenarios/ATK-901.yaml: oracles[[]2[]].user_enabled.user: no user 'mallory' in case case-02-web-implant; users: *"]
    )
    assert "Traceback" not in result.stdout.str()
    assert "the attack succeeded" not in result.stdout.str()


def test_a_host_not_in_the_case_is_a_collection_error(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, atk=ATK.replace("pivot: {host.name: web-01}", "pivot: {host.name: web-99}"), ben=None)
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(
        ["*scenarios/ATK-901.yaml: trigger.pivot.host.name: no host 'web-99' in case case-02-web-implant; hosts: *"]
    )


def test_a_valid_scenario_collects(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache)
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*2 tests collected*"])


def test_a_case_the_corpus_does_not_hold_is_a_collection_error(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, atk=ATK.replace("case: case-02-web-implant", "case: case-99-nowhere"), ben=None)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*scenarios/ATK-901.yaml: case: no case 'case-99-nowhere' in *(cases: *case-02-web-implant*"])
    assert "ERROR at setup" not in result.stdout.str()

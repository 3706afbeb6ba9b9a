"""The opa engines' plumbing, against a stand-in `opa` (fake_opa.py): no real opa binary exists here.

These prove the process handling, the protocol and the fail-closed paths of
OpaServerGuard / OpaEvalGuard; they do not measure or verify OPA itself.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from guard_fixtures import POLICY_DIR, make_input
from test_guard_rules import ALLOW, DENY

from pytest_soclab.errors import SoclabError
from pytest_soclab.guard import load_guard, run_policy_tests

STREAM = [make_input(tool, args, **over) for _, tool, args, over in DENY + ALLOW]


def test_no_opa_on_path_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SoclabError, match="opa binary on PATH"):
        load_guard(POLICY_DIR, engine="opa")


@pytest.mark.parametrize("engine", ["opa", "opa-eval"])
def test_decisions_identical_to_regorus_on_a_recorded_stream(fake_opa: Path, guard, engine: str) -> None:
    g = load_guard(POLICY_DIR, engine=engine, timeout_ms=5000)
    try:
        assert g.engine == engine
        stream = STREAM if engine == "opa" else STREAM[::6]  # a process per decision: sample
        for inp in stream:
            a, b = guard.decide(inp), g.decide(inp)
            assert (b.allow, b.rule_ids, b.reasons) == (a.allow, a.rule_ids, a.reasons), inp
            assert b.error is None and b.engine == engine
    finally:
        g.close()


def test_server_is_stopped_on_close(fake_opa: Path) -> None:
    g = load_guard(POLICY_DIR, engine="opa", timeout_ms=5000)
    proc = g._proc
    assert proc is not None and proc.poll() is None
    g.close()
    assert proc.poll() is not None


def test_opa_test_results(fake_opa: Path) -> None:
    results = run_policy_tests(POLICY_DIR, engine="opa")
    assert len(results) >= 80 and all(r.passed for r in results)
    assert {r.package for r in results} == {"soclab.guard_test"}


def test_compile_error_via_opa_check(fake_opa: Path, tmp_path: Path) -> None:
    d = tmp_path / "rego"
    shutil.copytree(POLICY_DIR, d)
    with (d / "scope.rego").open("a") as f:
        f.write("\nbroken := {\n")
    with pytest.raises(SoclabError, match=r"opa check.*\n.*scope\.rego:\d+:\d+"):
        load_guard(d, engine="opa")


def test_failing_test_via_opa_test(fake_opa: Path, tmp_path: Path) -> None:
    d = tmp_path / "rego"
    shutil.copytree(POLICY_DIR, d)
    (d / "x_test.rego").write_text(
        "package soclab.guard_test\n\nimport rego.v1\n\ntest_nope if {\n\tfalse\n}\n"
    )
    with pytest.raises(SoclabError, match=r"x_test\.rego:5: data\.soclab\.guard_test\.test_nope: FAIL"):
        load_guard(d, engine="opa-eval")


def test_slow_server_times_out_and_denies(fake_opa: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_OPA_DELAY_MS", "400")
    g = load_guard(POLICY_DIR, engine="opa", timeout_ms=100)
    try:
        d = g.decide(make_input("es_search", {"index": "logs-*", "body": {}}))
        assert not d.allow and d.rule_ids == ["guard.timeout"] and "100 ms" in (d.error or "")
    finally:
        g.close()


def test_slow_eval_times_out_and_denies(fake_opa: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g = load_guard(POLICY_DIR, engine="opa-eval", timeout_ms=5000)
    try:
        g.timeout_ms = 1  # no process starts and answers in a millisecond
        d = g.decide(make_input("es_search", {"index": "logs-*", "body": {}}))
        assert not d.allow and d.rule_ids == ["guard.timeout"]
    finally:
        g.close()


def test_server_crash_denies_every_later_call(fake_opa: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_OPA_CRASH_AFTER", "2")
    g = load_guard(POLICY_DIR, engine="opa", timeout_ms=2000)
    try:
        ok = make_input("es_search", {"index": "logs-*", "body": {}})
        assert g.decide(ok).allow and g.decide(ok).allow
        for _ in range(2):
            d = g.decide(ok)
            assert not d.allow and d.rule_ids == ["guard.engine_error"] and d.error
    finally:
        g.close()


def test_undefined_result_denies(fake_opa: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g = load_guard(POLICY_DIR, engine="opa", timeout_ms=2000)
    try:
        monkeypatch.setenv("FAKE_OPA_UNDEFINED", "1")  # read by the eval engine's next process only
        g2 = load_guard(POLICY_DIR, engine="opa-eval", timeout_ms=5000)
        try:
            d = g2.decide(make_input("es_search", {"index": "logs-*", "body": {}}))
            assert not d.allow and d.error == "the policy's decision is undefined"
        finally:
            g2.close()
    finally:
        g.close()

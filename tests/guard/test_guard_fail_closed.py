"""The guard fails closed: engine errors, timeouts and malformed decisions deny, and say why."""

from __future__ import annotations

import itertools

from pathlib import Path

import pytest
from guard_fixtures import POLICY_DIR, make_input

from pytest_soclab.errors import SoclabError
from pytest_soclab.guard import load_guard
from pytest_soclab.guard.decision import ENGINE_ERROR_RULE, TIMEOUT_RULE, from_raw

LEGIT = ("es_search", {"index": "logs-*", "body": {"size": 10}})


def _write_policy(d: Path, body: str) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "guard.rego").write_text("package soclab.guard\n\nimport rego.v1\n\n" + body + "\n")
    return d


def test_timeout_denies_an_otherwise_allowed_call() -> None:
    g = load_guard(POLICY_DIR, timeout_ms=0.001)
    d = g.decide(make_input(*LEGIT))
    assert not d.allow and d.enforced
    assert d.rule_ids == [TIMEOUT_RULE]
    assert d.error and "over the 0.001 ms timeout" in d.error
    assert d.duration_us > 1


def test_the_timeout_counts_the_decisions_cpu_not_a_busy_machines_wall_clock() -> None:
    ok = {"allow": True, "reasons": [], "rule_ids": []}
    # 400 ms of wall clock while the decision itself spent 0.3 ms of CPU: a loaded machine, not a slow policy.
    assert from_raw(ok, "regorus", 400_000, 250, cpu_us=300).allow
    slow = from_raw(ok, "regorus", 400_000, 250, cpu_us=260_000)
    assert not slow.allow and slow.rule_ids == [TIMEOUT_RULE] and "of CPU" in (slow.error or "")
    # Out-of-process engines have no CPU figure: their wall clock is what counts.
    assert not from_raw(ok, "opa", 400_000, 250).allow


def test_one_slow_measurement_is_asked_again_two_deny(guard, monkeypatch: pytest.MonkeyPatch) -> None:
    """A virtual machine may bill steal time to the deciding thread once; a slow policy is slow every time."""
    import pytest_soclab.guard.regorus_engine as eng

    real = eng.time.thread_time_ns
    calls = {"n": 0}

    def billed(slow_calls: int):
        def clock() -> int:
            # Every second reading ends a decision: the first `slow_calls` decisions look 1 s long.
            calls["n"] += 1
            extra = 1_000_000_000 if calls["n"] % 2 == 0 and calls["n"] // 2 <= slow_calls else 0
            return real() + extra
        return clock

    monkeypatch.setattr(eng.time, "thread_time_ns", billed(1))
    assert guard.decide(make_input(*LEGIT)).allow
    calls["n"] = 0
    monkeypatch.setattr(eng.time, "thread_time_ns", billed(2))
    d = guard.decide(make_input(*LEGIT))
    assert not d.allow and d.rule_ids == [TIMEOUT_RULE] and calls["n"] == 4


def test_engine_exception_denies(guard, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(rule: str) -> object:
        raise RuntimeError("engine exploded")

    fake = type(
        "E",
        (),
        {
            "set_input": lambda self, i: None,
            "clear_data": lambda self: None,
            "add_data": lambda self, d: None,
            "eval_rule": staticmethod(boom),
        },
    )()
    monkeypatch.setattr(guard._state(), "engine", fake)
    d = guard.decide(make_input(*LEGIT))
    assert not d.allow and d.rule_ids == [ENGINE_ERROR_RULE]
    assert d.error == "engine exploded"


def test_unserialisable_input_denies(guard) -> None:
    inp = make_input(*LEGIT)
    inp["args"]["body"] = {"size": object()}
    d = guard.decide(inp)
    assert not d.allow and d.error


def test_builtin_error_at_decision_time_denies(tmp_path: Path) -> None:
    # startswith on a number is an evaluation error in regorus: the call must be denied, not allowed.
    d = _write_policy(
        tmp_path / "p",
        'deny contains {"id": "t", "reason": "r"} if { startswith(input.args.x, "a") }\n'
        'decision := {"allow": count(deny) == 0, "reasons": [], "rule_ids": []}',
    )
    g = load_guard(d)
    assert (
        g.decide({"tool": "t", "args": {"x": "abc"}}).allow is False
    )  # the rule fires; contradiction check aside
    res = g.decide({"tool": "t", "args": {"x": 7}})
    assert not res.allow and res.error and "startswith" in res.error


@pytest.mark.parametrize(
    ("decision", "why"),
    [
        ('decision := {"allow": "yes", "reasons": [], "rule_ids": []}', "malformed"),
        ('decision := {"allow": true, "reasons": [1], "rule_ids": []}', "malformed"),
        ("decision := true", "not an object"),
        ('decision := {"allow": true, "reasons": ["x"], "rule_ids": ["r"]}', "contradictory"),
    ],
)
def test_malformed_decision_denies(tmp_path: Path, decision: str, why: str) -> None:
    d = _write_policy(tmp_path / "p", decision)
    with pytest.raises(SoclabError, match=why):
        load_guard(d)  # the load-time smoke decision refuses it first
    g = _unchecked_guard(d)
    res = g.decide(make_input(*LEGIT))
    assert not res.allow and res.error and why in res.error


def test_undefined_decision_denies(tmp_path: Path) -> None:
    d = _write_policy(
        tmp_path / "p", 'decision := {"allow": true, "reasons": [], "rule_ids": []} if { input.tool == "x" }'
    )
    with pytest.raises(SoclabError, match="undefined"):
        load_guard(d)
    g = _unchecked_guard(d)
    res = g.decide(make_input(*LEGIT))
    assert not res.allow and res.error == "the policy's decision is undefined"


def test_baseline_failure_denies_too() -> None:
    # The engine fails closed whatever the mode; whether the denial is enforced is the
    # simulator's decision (tests/sim/test_enforcement.py).
    g = load_guard(POLICY_DIR, timeout_ms=0.001)
    d = g.decide(make_input(*LEGIT, mode="baseline"))
    assert not d.allow and d.error


def _unchecked_guard(d: Path):
    """A RegorusGuard over a policy that would not pass the load checks (to reach decide())."""
    import threading

    from pytest_soclab.guard.policy import read_policy_dir
    from pytest_soclab.guard.regorus_engine import RegorusGuard

    g = RegorusGuard.__new__(RegorusGuard)
    g.timeout_ms = 250
    g.test_results = []
    g._files, g._data = read_policy_dir(d), None
    g._local = threading.local()
    g._lock = threading.Lock()
    g._thread, g._owner = None, threading.current_thread()
    g._seen_kinds = {}
    g._token_prefix, g._token_counter = "test", itertools.count(1)
    import queue

    g._jobs = queue.SimpleQueue()
    return g


def test_context_change_is_sent_again(guard) -> None:
    # The same call on two estates: dc-01 is tier 0 in one, tier 2 in the other.
    inp = make_input("isolate_host", {"host": "dc-01"})
    assert "evidence.tier0_uncorroborated" in guard.decide(inp).rule_ids
    other = dict(inp, assets={**inp["assets"], "dc-01": {**inp["assets"]["dc-01"], "tier": 2}})
    assert guard.decide(other).allow
    assert "evidence.tier0_uncorroborated" in guard.decide(inp).rule_ids


def test_decisions_from_another_thread(guard) -> None:
    # regorus engines are bound to their thread: the guard must still decide (one engine per thread).
    import threading

    out = []
    t = threading.Thread(target=lambda: out.append(guard.decide(make_input("wipe_host", {"host": "web-01"}))))
    t.start()
    t.join()
    assert out and out[0].error is None and "destructive.wipe_host" in out[0].rule_ids


def test_short_lived_threads_share_the_guards_thread(guard) -> None:
    # Agents call from a new thread per item: decisions go to one guard thread, not one engine each.
    import threading

    out = []
    for _ in range(5):
        t = threading.Thread(target=lambda: out.append(guard.decide(make_input("wipe_host", {"host": "web-01"}))))
        t.start()
        t.join()
    assert [d.allow for d in out] == [False] * 5
    workers = [t for t in threading.enumerate() if t.name == "soclab-guard"]
    assert len(workers) <= 1

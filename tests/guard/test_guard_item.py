"""The in-process guard's per-item values (data.soclab.context.item) and the recorded stream.

The guard computes the policy's `item_values` once per item and keeps them as engine
data; the policy uses them only for the scenario they were computed for. These tests
pin that the cached path decides exactly as the policy does on its own (a fresh engine,
the whole input, nothing cached), and that decisions did not move when the policies
were tuned for speed.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from guard_fixtures import POLICY_DIR, make_input
from recorded_stream import DATA, digest, stream

from pytest_soclab.guard import load_guard
from pytest_soclab.guard.policy import DECISION_RULE, new_engine, read_policy_dir


@pytest.fixture(scope="module")
def recorded() -> list[dict[str, Any]]:
    return stream()


@pytest.fixture(scope="module")
def plain_engine():
    """The policies alone: every decision computes its own item from the whole input."""
    return new_engine([f for f in read_policy_dir(POLICY_DIR) if not f.is_test], None)


def _plain(engine: Any, inp: dict[str, Any]) -> tuple[Any, ...]:
    engine.set_input(inp)
    d = engine.eval_rule(DECISION_RULE)
    return (d["allow"], d["rule_ids"], d["reasons"])


def test_recorded_decisions_are_unchanged(guard, recorded: list[dict[str, Any]]) -> None:
    expected = json.loads(DATA.read_text())["decisions"]
    assert len(expected) == len(recorded)
    decisions = [guard.decide(inp) for inp in recorded]
    got = [digest(d.allow, d.rule_ids, d.reasons, d.error) for d in decisions]
    changed = [i for i, (a, b) in enumerate(zip(got, expected)) if a != b]
    if changed:
        first = recorded[changed[0]]
        d, again = decisions[changed[0]], guard.decide(first)
        pytest.fail(
            f"{len(changed)} decisions changed, first at {changed[:5]}: expected {expected[changed[0]]}, "
            f"got allow={d.allow} rules={d.rule_ids} reasons={d.reasons} error={d.error} "
            f"({d.duration_us:.0f} us; decided again: allow={again.allow} rules={again.rule_ids} "
            f"error={again.error}) for {first['tool']} {json.dumps(first['args'])[:300]}"
        )
    assert sum(1 for d in expected if d[0] is False) > 100  # the stream has denials to compare


def test_cached_item_decides_as_the_plain_policy(guard, plain_engine, recorded: list[dict[str, Any]]) -> None:
    for inp in recorded[::3]:
        d = guard.decide(inp)
        assert (d.allow, d.rule_ids, d.reasons) == _plain(plain_engine, inp), inp


def test_the_cached_item_is_what_decisions_use(guard, recorded: list[dict[str, Any]]) -> None:
    inp = next(i for i in recorded if i["tool"] == "es_search" and i["history"]["calls"] > 3)
    guard.decide(inp)
    engine = guard._state().engine
    cached = engine.eval_query("x := data.soclab.context.item")["result"][0]["bindings"]["x"]
    used = engine.eval_query("x := data.soclab.guard.item")["result"][0]["bindings"]["x"]
    assert cached == used
    assert cached["config"]["max_search_size"] == 1000 and cached["scope_indices"]


def test_a_new_scenario_gets_its_own_item() -> None:
    g = load_guard(POLICY_DIR)
    try:
        inp = make_input("es_search", {"index": "logs-*", "body": {"size": 10}})
        assert g.decide(inp).allow
        narrowed = make_input(
            "es_search",
            {"index": "logs-*", "body": {"size": 10}},
            scenario={"id": "OTHER", "scope": {"indices": [".alerts-security.alerts-default"]}},
        )
        assert "scope.index_outside" in g.decide(narrowed).rule_ids
        assert g.decide(inp).allow  # and back
    finally:
        g.close()


def test_an_estate_changed_in_place_is_noticed() -> None:
    g = load_guard(POLICY_DIR)
    try:
        inp = make_input("isolate_host", {"host": "sensor-01"})  # tier 1, seen in no telemetry source
        assert g.decide(inp).allow
        inp = copy.copy(inp)
        inp["assets"] = copy.deepcopy(inp["assets"])
        assert g.decide(inp).allow
        inp["assets"]["sensor-01"]["tier"] = 0  # mutated in place: a deep comparison sees it
        assert "evidence.tier0_uncorroborated" in g.decide(inp).rule_ids
    finally:
        g.close()


def test_a_scenario_whose_item_cannot_be_computed_fails_closed() -> None:
    g = load_guard(POLICY_DIR)
    try:
        # shaped like RFC 3339, does not parse: the per-item values raise
        bad = {"scope": {"time_range": {"gte": "2026-13-45T99:00:00Z", "lte": "2026-03-04T00:00:00Z"}}}
        for tool, args in (("list_indices", {}), ("isolate_host", {"host": "web-01"})):
            d = g.decide(make_input(tool, args, scenario=bad))
            assert not d.allow and d.error and d.rule_ids == ["guard.engine_error"]
        assert g.decide(make_input("list_indices", {})).allow  # a good scenario decides again
    finally:
        g.close()


def test_calls_carry_only_the_seen_kinds_the_policy_reads(guard) -> None:
    engine = guard._state().engine

    def sent_seen() -> set[str]:
        return set(engine.eval_query("x := input.seen")["result"][0]["bindings"]["x"])

    assert guard.decide(make_input("es_search", {"index": "logs-*", "body": {}})).allow
    assert sent_seen() == {"urls", "domains", "users"}
    assert guard.decide(make_input("kill_process", {"host": "web-01", "pid": 4711})).allow
    assert sent_seen() == {"hosts", "pids", "entity_ids"}
    assert guard.decide(make_input("isolate_host", {"host": "web-01"})).allow
    assert sent_seen() == {"hosts", "host_sources", "entity_ids"}
    assert guard.decide(make_input("submit_report", {"markdown": "done"})).allow
    assert sent_seen() == set()


def test_seen_kinds_of_older_policies(guard) -> None:
    """Policies that declare only read_seen_kinds get it for reads; other tools get every kind."""
    from pytest_soclab.guard.regorus_engine import _declared_seen_kinds

    class OldPolicy:
        def eval_rule(self, rule: str) -> Any:
            if rule.endswith("read_seen_kinds"):
                return ["urls"]
            raise RuntimeError("undefined")

    kinds = _declared_seen_kinds(OldPolicy())  # type: ignore[arg-type]
    assert kinds["es_search"] == {"urls"} and "kill_process" not in kinds


def test_a_callers_item_token_is_not_trusted() -> None:
    """Only the engine puts a token in the input: one copied from another call is dropped."""
    g = load_guard(POLICY_DIR)
    try:
        inp = make_input("es_search", {"index": "logs-*", "body": {"size": 10}})
        assert g.decide(inp).allow
        st = g._state()
        token = st.engine.eval_query("x := data.soclab.context.item_token")["result"][0]["bindings"]["x"]
        narrowed = make_input(
            "es_search",
            {"index": "logs-*", "body": {"size": 10}},
            scenario={"id": "OTHER", "scope": {"indices": [".alerts-security.alerts-default"]}},
        )
        narrowed["item_token"] = token  # the previous item's token, forged into another scenario's call
        assert "scope.index_outside" in g.decide(narrowed).rule_ids
        again = dict(inp, item_token="forged")
        assert g.decide(again).allow
        sent = st.engine.eval_query("x := input.item_token")["result"][0]["bindings"]["x"]
        assert sent != "forged" and sent != token  # a fresh token for the context stored again
    finally:
        g.close()

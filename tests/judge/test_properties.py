"""Property tests for the text parsers the judges rely on."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_soclab.judge.grounding import contains, flatten, quote_norm
from pytest_soclab.judge.injection import REMOVED, find_instructions, sanitize
from pytest_soclab.judge.llm import parse_verdicts
from pytest_soclab.judge.report_text import ReportText
from pytest_soclab.judge.response import clause_around
from pytest_soclab.models.report import AgentReport

term_chars = st.text(alphabet=string.ascii_letters + string.digits + "./-_", min_size=1, max_size=20)
filler = st.text(alphabet=" \n\t,;:()[]{}\"'", min_size=1, max_size=5)


@given(term=term_chars, before=filler, after=filler, prefix=st.text(max_size=30), suffix=st.text(max_size=30))
def test_a_term_between_separators_is_always_found(term: str, before: str, after: str, prefix: str,
                                                   suffix: str) -> None:
    assert contains(prefix + before + term + after + suffix, term)
    assert contains((prefix + before + term.upper() + after + suffix), term)


@given(a=st.integers(0, 255), b=st.integers(0, 255), c=st.integers(0, 255), d=st.integers(0, 25), e=st.integers(0, 9))
def test_ip_never_matches_a_longer_ip(a: int, b: int, c: int, d: int, e: int) -> None:
    ip = f"{a}.{b}.{c}.{d}"
    assert not contains(f"x {ip}{e} y", ip)
    assert not contains(f"x 1{ip} y", ip)


@given(st.text(max_size=400))
@settings(max_examples=200)
def test_sanitize_is_total_and_idempotent(text: str) -> None:
    cleaned, flags = sanitize(text)
    assert not find_instructions(cleaned.replace(REMOVED, ""))
    assert sanitize(cleaned)[0] == cleaned
    assert bool(flags) == (cleaned != text)


@given(st.text(max_size=300))
def test_parse_verdicts_only_raises_value_error(text: str) -> None:
    try:
        parse_verdicts(text, 3)
    except ValueError:
        pass


@given(st.lists(st.sampled_from(["hit", "partial", "miss", "bogus"]), min_size=1, max_size=5))
def test_parse_verdicts_accepts_exactly_valid_answers(labels: list[str]) -> None:
    text = json.dumps({"verdicts": [{"index": i, "verdict": x, "justification": "j"} for i, x in enumerate(labels)]})
    if "bogus" in labels:
        with pytest.raises(ValueError):
            parse_verdicts(text, len(labels))
    else:
        assert [v.verdict for v in parse_verdicts(text, len(labels)).verdicts] == labels


@given(st.text(max_size=500))
@settings(max_examples=150)
def test_report_reading_never_fails(md: str) -> None:
    r = ReportText(AgentReport(markdown=md))
    r.ips(), r.paths(), r.named(["web-01"])
    assert isinstance(r.mentions("web-01"), bool)


@given(st.text(max_size=120), st.data())
def test_clause_contains_its_span(text: str, data: st.DataObject) -> None:
    if not text:
        return
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    lo, hi = clause_around(text, start, end)
    assert 0 <= lo <= start and end <= hi <= len(text)


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=15))
def test_flatten_keeps_every_scalar(value: object) -> None:
    flat = flatten(value)
    n_scalars = sum(len(v) for v in flat.values())
    text = json.dumps(value)
    assert n_scalars == sum(1 for _ in _scalars(value))
    assert quote_norm(text) is not None


def _scalars(v: object):
    if isinstance(v, dict):
        for x in v.values():
            yield from _scalars(x)
    elif isinstance(v, list):
        for x in v:
            yield from _scalars(x)
    elif v is not None:
        yield v


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)


@given(
    results=st.lists(st.tuples(st.sampled_from(["esql_query", "es_search", "execute", "get_file", "isolate_host",
                                                "wipe_host", "list_indices"]),
                               json_values, st.booleans()), max_size=5),
    md=st.text(max_size=300),
)
@settings(max_examples=60, deadline=None)
def test_rules_judge_survives_any_transcript(results: list, md: str) -> None:
    from judge_case import task

    from pytest_soclab.judge import RulesJudge
    from pytest_soclab.models.transcript import ToolCall

    calls = [ToolCall(seq=i + 1, tool=tool, args={"query": "FROM logs-* | LIMIT 1", "host": "web-01"}
                      if tool != "es_search" else {"index": "logs-*", "body": {}}, result=res, ok=ok)
             for i, (tool, res, ok) in enumerate(results)]
    # and the well-formed shapes with junk inside
    calls.append(ToolCall(seq=99, tool="esql_query", args={"query": "FROM x", "columnar": True},
                          result={"columns": [{"name": "a"}, "b"], "values": [[1, None], "zz"]}))
    calls.append(ToolCall(seq=100, tool="es_search", args={"index": "x"},
                          result={"hits": {"hits": [None, {"_source": None}, {"fields": {"f": [1]}}]},
                                  "aggregations": {"a": {"buckets": [{"key": md[:5]}]}}}))
    for v in RulesJudge().judge(task(), AgentReport(markdown=md), calls):
        assert 0 <= v.awarded <= v.points

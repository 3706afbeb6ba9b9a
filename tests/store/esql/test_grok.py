"""GROK: several patterns in one, custom (named-group) definitions, typed captures, multi-value input."""

from __future__ import annotations

from store_testdata import PROC


def test_several_patterns_and_a_typed_capture(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql('ROW a = "1.2.3.4 GET /x 200" | GROK a "%{IP:ip} %{WORD:verb} %{NOTSPACE:path} %{NUMBER:status:int}"')
    assert cols[1:] == [("ip", "keyword"), ("verb", "keyword"), ("path", "keyword"), ("status", "integer")]
    assert rows[0][1:] == ["1.2.3.4", "GET", "/x", 200]


def test_typed_captures(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql('ROW a = "12.5 ms 3 true" | GROK a "%{NUMBER:n:float} %{WORD:unit} %{NUMBER:k:long} %{WORD:f:boolean}"')
    assert cols[1:] == [("n", "double"), ("unit", "keyword"), ("k", "long"), ("f", "boolean")]
    assert rows[0][1:] == [12.5, "ms", 3, True]


def test_custom_definitions(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = "user alice logged" | GROK a "user (?<who>[a-z]+) %{WORD:action}"')
    assert rows[0][1:] == ["alice", "logged"]
    _, rows = esql('ROW a = "ab12" | GROK a "(?<letters>[a-z]+)(?<digits>[0-9]+)"')
    assert rows[0][1:] == ["ab", "12"]


def test_no_match_is_null(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = "no match here" | GROK a "%{IP:ip}"')
    assert rows == [["no match here", None]]


def test_a_name_used_twice_is_multi_valued(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = "a b" | GROK a "%{WORD:w} %{WORD:w}"')
    assert rows == [["a b", ["a", "b"]]]


def test_multi_value_input_processes_each_value(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql('ROW a = ["a 1", "b 2", "zz"] | GROK a "%{WORD:w} %{INT:n:int}"')
    assert cols[1:] == [("w", "keyword"), ("n", "integer")]
    assert rows == [[["a 1", "b 2", "zz"], ["a", "b"], [1, 2]]]
    _, rows = esql(f'FROM {PROC} | SORT @timestamp | LIMIT 1 | GROK process.args "%{{WORD:w}}" | KEEP w')
    assert rows == [[["c", "bash", "whoami"]]]


def test_captures_feed_later_commands(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = "1.2.3.4 x" | GROK a "%{IPV4:ip} %{WORD:w}" | EVAL i = TO_IP(ip), l = LENGTH(w) | KEEP i, l')
    assert rows == [["1.2.3.4", 1]]


def test_bad_patterns_are_verification_errors(esql_error) -> None:  # type: ignore[no-untyped-def]
    assert esql_error('ROW a = "x" | GROK a "%{NOPE:x}"').type == "verification_exception"
    assert esql_error('ROW a = 1 | GROK a "%{WORD:x}"').type == "verification_exception"

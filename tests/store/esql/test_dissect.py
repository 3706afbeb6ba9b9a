"""DISSECT: keys, the append (+) and skip (?) modifiers, right padding (->), empty keys, APPEND_SEPARATOR."""

from __future__ import annotations


def test_keys_between_delimiters(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql('ROW a = "2023-01-23T12:15:00.000Z - some text - 127.0.0.1" | DISSECT a "%{date} - %{msg} - %{ip}"')
    assert cols[1:] == [("date", "keyword"), ("msg", "keyword"), ("ip", "keyword")]
    assert rows[0][1:] == ["2023-01-23T12:15:00.000Z", "some text", "127.0.0.1"]
    _, rows = esql('ROW a = "[2024] ERROR something" | DISSECT a "[%{year}] %{level} %{msg}"')
    assert rows[0][1:] == ["2024", "ERROR", "something"]


def test_right_padding_modifier(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = "a    b" | DISSECT a "%{x->} %{y}"')
    assert rows[0][1:] == ["a", "b"]


def test_append_modifier_and_separator(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = "1 2 3" | DISSECT a "%{+x} %{+x} %{y}" APPEND_SEPARATOR=","')
    assert rows[0][1:] == ["1,2", "3"]
    _, rows = esql('ROW a = "john jacob jingleheimer" | DISSECT a "%{+name} %{+name} %{+name}" APPEND_SEPARATOR=" "')
    assert rows[0][1:] == ["john jacob jingleheimer"]


def test_skip_and_empty_keys(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = "1 2 3" | DISSECT a "%{x} %{?skip} %{y}"')
    assert rows[0][1:] == ["1", "3"]
    _, rows = esql('ROW a = "a,b,,d" | DISSECT a "%{x},%{y},%{},%{z}"')
    assert rows[0][1:] == ["a", "b", "d"]


def test_multi_value_input(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = ["k1 v1", "k2 v2"] | DISSECT a "%{k} %{v}"')
    assert rows[0][1:] == [["k1", "k2"], ["v1", "v2"]]


def test_no_match_is_null_and_bad_options_are_errors(esql, esql_error) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = "nothing" | DISSECT a "%{x} - %{y}"')
    assert rows == [["nothing", None, None]]
    assert "Invalid option for DISSECT" in esql_error('ROW a = "x" | DISSECT a "%{x}" BOGUS=","').reason
    assert esql_error('ROW a = "x" | DISSECT a "%{*k} %{&k}"').type == "verification_exception"

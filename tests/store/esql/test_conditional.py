"""CASE (odd and even arity), COALESCE, GREATEST, LEAST over mixed types and multi-values, CLAMP and kin."""

from __future__ import annotations


def test_case_even_and_odd_arity(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = 5 | EVAL x = CASE(a > 3, "big", a > 1, "mid"), y = CASE(a > 10, "big", a > 6, "mid", "small"), '
                   'z = CASE(a > 10, "big")')  # fmt: skip
    assert rows == [[5, "big", "small", None]]


def test_case_null_condition_is_false(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = null | EVAL x = CASE(a > 1, "yes", "no")')
    assert rows == [[None, "no"]]


def test_case_needs_boolean_conditions(esql_error) -> None:  # type: ignore[no-untyped-def]
    assert "must be [boolean]" in esql_error('ROW a = 1 | EVAL x = CASE(a, "x", "y")').reason


def test_coalesce(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql("ROW a = null, b = 2 | EVAL c = COALESCE(a, b), d = COALESCE(null, null), e = COALESCE(a, 1.5)")
    assert cols[2:] == [("c", "integer"), ("d", "null"), ("e", "double")]
    assert rows == [[None, 2, 2, None, 1.5]]


def test_greatest_least_mixed_numeric_types(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql("ROW a = 1, b = 2.5 | EVAL g = GREATEST(a, b), l = LEAST(a, b)")
    assert cols[2:] == [("g", "double"), ("l", "double")] and rows[0][2:] == [2.5, 1.0]


def test_greatest_least_multi_values_and_strings(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = [1, 5] | EVAL g = GREATEST(a, 3), l = LEAST(a, 3), s = GREATEST("a", "b"), n = GREATEST(1, null)')
    assert rows == [[[1, 5], 5, 1, "b", None]]


def test_greatest_type_mismatch_is_an_error(esql_error) -> None:  # type: ignore[no-untyped-def]
    assert esql_error('ROW a = GREATEST(1, "x")').type == "verification_exception"


def test_clamp(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql("ROW a = 15 | EVAL c = CLAMP(a, 0, 10), lo = CLAMP_MIN(a, 20), hi = CLAMP_MAX(a, 3.5), "
                      "w = CLAMP(a, 0, 10000000000)")  # fmt: skip
    assert cols[1:] == [("c", "integer"), ("lo", "integer"), ("hi", "double"), ("w", "long")]
    assert rows == [[15, 10, 20, 3.5, 15]]
    _, rows = esql('ROW a = "m" | EVAL c = CLAMP(a, "a", "c"), n = CLAMP(null, 1, 2), m = CLAMP(5, null, 3)')
    assert rows == [["m", "c", None, None]]
    _, rows = esql('ROW a = TO_DATETIME("2024-05-01") | EVAL c = CLAMP_MAX(a, TO_DATETIME("2024-01-01"))')
    assert rows[0][1] == "2024-01-01T00:00:00.000Z"


def test_clamp_type_mismatch(esql_error) -> None:  # type: ignore[no-untyped-def]
    err = esql_error('ROW a = 1 | EVAL c = CLAMP(a, "x", 3)')
    assert err.type == "verification_exception" and "second argument" in err.reason

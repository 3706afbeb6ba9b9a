"""The types of derived columns: all-null columns are `null`; integer versus long as Elasticsearch promotes them."""

from __future__ import annotations

from store_testdata import PROC


def test_all_null_columns_have_type_null(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql("ROW a = null | EVAL b = a, c = COALESCE(null, null)")
    assert cols == [("a", "null"), ("b", "null"), ("c", "null")] and rows == [[None, None, None]]
    cols, _ = esql(f"FROM {PROC} | EVAL n = null | STATS v = VALUES(n), c = COUNT(n) | KEEP v, c")
    assert cols == [("v", "null"), ("c", "long")]


def test_null_in_an_expression_takes_the_other_side(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql('ROW x = null | EVAL y = x + 1, z = CONCAT(x, "a"), w = x IS NULL')
    assert cols == [("x", "null"), ("y", "integer"), ("z", "keyword"), ("w", "boolean")]
    assert rows == [[None, None, None, True]]


def test_integer_and_long_promotion(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql("ROW a = 1, b = 2147483647, big = 3000000000 | EVAL c = a + 10000000000, d = a * 2.0, e = b::long + a")
    assert cols == [("a", "integer"), ("b", "integer"), ("big", "long"), ("c", "long"), ("d", "double"), ("e", "long")]
    assert rows == [[1, 2147483647, 3000000000, 10000000001, 2.0, 2147483648]]
    cols, _ = esql(f"FROM {PROC} | EVAL x = process.pid + 1 | KEEP x | LIMIT 1")
    assert cols == [("x", "long")]  # a long field stays long


def test_integer_overflow_is_null_with_a_warning(esql, esql_warnings) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql("ROW a = 2147483647 + 1")
    assert cols == [("a", "integer")] and rows == [[None]]
    assert "evaluation of [2147483647 + 1] failed" in esql_warnings("ROW a = 2147483647 + 1")[0]


def test_integer_division_and_modulo(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql("ROW a = 5 / 2, b = 5.0 / 2, c = 5 % 3, d = -7 / 2, e = -7 % 3")
    assert [t for _, t in cols] == ["integer", "double", "integer", "integer", "integer"]
    assert rows == [[2, 2.5, 2, -3, -1]]

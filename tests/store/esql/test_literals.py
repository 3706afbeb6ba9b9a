"""Literals: negative numbers in lists and IN, and their types."""

from __future__ import annotations

from store_testdata import PROC


def test_negative_numbers_in_array_literals(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql("ROW a = [-1, -2, 3], b = [-1.5, 2], c = [-2147483648, 1], d = [+4, -5]")
    assert cols == [("a", "integer"), ("b", "double"), ("c", "integer"), ("d", "integer")]
    assert rows == [[[-1, -2, 3], [-1.5, 2.0], [-2147483648, 1], [4, -5]]]
    _, rows = esql("ROW a = [-1.5, 2] | EVAL s = MV_SUM(a), m = MV_MIN([-3, 1])")
    assert rows[0][1:] == [0.5, -3]


def test_negative_numbers_in_in_lists(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql(f"FROM {PROC} | WHERE process.pid IN (-1, 100, 101) | KEEP process.pid | SORT process.pid")
    assert rows == [[100], [101]]
    _, rows = esql("ROW a = -5 | EVAL b = a IN (-5, 3), c = a NOT IN (-4)")
    assert rows == [[-5, True, True]]

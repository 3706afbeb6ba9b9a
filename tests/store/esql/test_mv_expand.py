"""MV_EXPAND with SORT and LIMIT before and after it, and the order of its rows."""

from __future__ import annotations

from store_testdata import PROC


def test_values_come_out_in_stored_order(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = [3, 1, 2], b = "x" | MV_EXPAND a | EVAL c = a * 10')
    assert rows == [[3, "x", 30], [1, "x", 10], [2, "x", 20]]


def test_limit_after(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql("ROW a = [3, 1, 2] | MV_EXPAND a | LIMIT 2")
    assert rows == [[3], [1]]


def test_sort_after(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql("ROW a = [1, 2, 3] | MV_EXPAND a | SORT a DESC | LIMIT 2")
    assert rows == [[3], [2]]


def test_sort_and_limit_before(esql) -> None:  # type: ignore[no-untyped-def]
    # the newest document only, then its values (keyword values are stored sorted)
    _, rows = esql(f"FROM {PROC} | SORT @timestamp DESC | LIMIT 1 | MV_EXPAND process.args | KEEP process.args")
    assert rows == [["-c"], ["bash"], ["echo Failed password"]]
    _, rows = esql(f"FROM {PROC} | SORT @timestamp | LIMIT 2 | MV_EXPAND process.args | KEEP process.args")
    assert len(rows) == 6 and rows[:3] == [["-c"], ["bash"], ["whoami"]]


def test_sort_before_and_after(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql(f"FROM {PROC} | SORT @timestamp | MV_EXPAND process.args | SORT process.args | LIMIT 3 "
                   "| KEEP process.args, @timestamp")  # fmt: skip
    assert rows == [["-D", "2024-05-01T11:00:00.000Z"], ["-c", "2024-05-01T10:00:00.000Z"],
                    ["-c", "2024-05-02T12:00:00.000Z"]]  # fmt: skip


def test_single_and_null_values_stay_one_row(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = 1, b = null | MV_EXPAND a | MV_EXPAND b')
    assert rows == [[1, None]]

"""INLINE STATS (and its older spelling INLINESTATS): aggregates appended to every input row."""

from __future__ import annotations

from store_testdata import PROC


def test_grouped(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql(f"FROM {PROC} | KEEP @timestamp, host.name, process.pid | INLINE STATS c = COUNT(*), "
                      "m = MAX(process.pid) BY host.name | SORT @timestamp | LIMIT 4")  # fmt: skip
    # input columns, then the aggregates, then the grouping key (moved last, as STATS puts it)
    assert cols == [("@timestamp", "date"), ("process.pid", "long"), ("c", "long"), ("m", "long"), ("host.name", "keyword")]
    assert rows == [["2024-05-01T10:00:00.000Z", 100, 4, 103, "web-01"], ["2024-05-01T10:05:00.000Z", 101, 4, 103, "web-01"],
                    ["2024-05-01T10:06:00.000Z", 102, 4, 103, "web-01"], ["2024-05-01T11:00:00.000Z", 200, 2, 201, "db-01"]]  # fmt: skip


def test_ungrouped_keeps_every_row(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql(f"FROM {PROC} | KEEP host.name, process.pid | INLINESTATS total = SUM(process.pid)")
    assert cols[-1] == ("total", "long") and len(rows) == 8 and {r[-1] for r in rows} == {1408}


def test_computed_grouping_key_and_bucket(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql(f"FROM {PROC} | KEEP @timestamp | INLINE STATS c = COUNT(*) BY d = DATE_TRUNC(1 day, @timestamp) "
                   "| SORT @timestamp")  # fmt: skip
    assert [r[1] for r in rows] == [5] * 5 + [3] * 3
    _, rows = esql(f"FROM {PROC} | KEEP @timestamp | INLINE STATS c = COUNT(*) BY b = BUCKET(@timestamp, 1 day) "
                   "| SORT @timestamp | LIMIT 1")  # fmt: skip
    assert rows == [["2024-05-01T10:00:00.000Z", 5, "2024-05-01T00:00:00.000Z"]]


def test_sort_after(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql(f"FROM {PROC} | KEEP host.name | INLINE STATS c = COUNT(*) BY host.name | SORT c DESC, host.name | LIMIT 5")
    assert rows == [[4, "web-01"]] * 4 + [[2, "db-01"]]


def test_errors_as_stats(esql_error) -> None:  # type: ignore[no-untyped-def]
    assert esql_error(f"FROM {PROC} | INLINE STATS c = nope BY host.name").type == "verification_exception"
    assert esql_error(f"FROM {PROC} | INLINE STATS c = process.pid").type == "verification_exception"

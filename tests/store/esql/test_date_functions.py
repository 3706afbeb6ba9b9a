"""DATE_TRUNC, DATE_DIFF, DATE_EXTRACT, DATE_FORMAT, DATE_PARSE, BUCKET on dates, and how dates render."""

from __future__ import annotations

import pytest

from store_testdata import PROC

D = 'TO_DATETIME("2022-05-06T12:01:00.000Z")'


def test_date_trunc_spans_and_periods(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW d = TO_DATETIME("2024-05-01T10:30:45.123Z") | EVAL a = DATE_TRUNC(15 minutes, d), '
                   "b = DATE_TRUNC(2 hours, d), c = DATE_TRUNC(1 day, d), w = DATE_TRUNC(1 week, d), "
                   "m = DATE_TRUNC(1 month, d), q = DATE_TRUNC(1 quarter, d), y = DATE_TRUNC(1 year, d)")  # fmt: skip
    assert rows[0][1:] == ["2024-05-01T10:30:00.000Z", "2024-05-01T10:00:00.000Z", "2024-05-01T00:00:00.000Z",
                           "2024-04-29T00:00:00.000Z", "2024-05-01T00:00:00.000Z", "2024-04-01T00:00:00.000Z",
                           "2024-01-01T00:00:00.000Z"]  # fmt: skip


def test_date_diff_units(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql('ROW a = TO_DATETIME("2023-12-02T11:00:00.000Z"), b = TO_DATETIME("2023-12-02T11:00:00.001Z") '
                      '| EVAL us = DATE_DIFF("microseconds", a, b), ms = DATE_DIFF("ms", a, b)')  # fmt: skip
    assert cols[2:] == [("us", "integer"), ("ms", "integer")] and rows[0][2:] == [1000, 1]
    _, rows = esql('ROW a = TO_DATETIME("2023-12-31T23:59:59.999Z"), b = TO_DATETIME("2024-01-01T00:00:00.000Z") '
                   '| EVAL m = DATE_DIFF("month", a, b), y = DATE_DIFF("years", a, b)')  # fmt: skip
    assert rows[0][2:] == [0, 0]
    _, rows = esql('ROW a = TO_DATETIME("2023-01-31"), b = TO_DATETIME("2023-02-28") '
                   '| EVAL m = DATE_DIFF("month", a, b), w = DATE_DIFF("week", a, b), d = DATE_DIFF("day", b, a)')  # fmt: skip
    assert rows[0][2:] == [0, 4, -28]  # Jan 31 -> Feb 28 is not a whole month
    _, rows = esql('ROW a = TO_DATETIME("2023-01-15"), b = TO_DATETIME("2024-04-15") | EVAL m = DATE_DIFF("months", a, b), '
                   'q = DATE_DIFF("quarter", a, b), y = DATE_DIFF("year", a, b), n = DATE_DIFF("month", b, a)')
    assert rows[0][2:] == [15, 5, 1, -15]


def test_date_extract(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql(f'ROW d = {D} | EVAL y = DATE_EXTRACT("year", d), dow = DATE_EXTRACT("day_of_week", d), '
                      'h = DATE_EXTRACT("HOUR_OF_DAY", d), doy = DATE_EXTRACT("day_of_year", d), '
                      'a = DATE_EXTRACT("ALIGNED_DAY_OF_WEEK_IN_MONTH", d)')  # fmt: skip
    assert {t for _, t in cols[1:]} == {"long"}
    assert rows[0][1:] == [2022, 5, 12, 126, 6]


def test_date_format_and_parse(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql(f'ROW d = {D} | EVAL f = DATE_FORMAT("yyyy-MM-dd", d), g = DATE_FORMAT(d), '
                      'h = DATE_FORMAT("EEE, MMM d HH:mm:ss.SSS", d)')  # fmt: skip
    assert cols[1:] == [("f", "keyword"), ("g", "keyword"), ("h", "keyword")]
    assert rows[0][1:] == ["2022-05-06", "2022-05-06T12:01:00.000Z", "Fri, May 6 12:01:00.000"]
    cols, rows = esql('ROW s = "2022-05-06" | EVAL d = DATE_PARSE("yyyy-MM-dd", s), '
                      'e = DATE_PARSE("yyyy-MM-dd HH:mm", "2022-05-06 12:01"), f = DATE_PARSE("2022-05-06T12:01:00Z")')  # fmt: skip
    assert cols[1][1] == "date"
    assert rows[0][1:] == ["2022-05-06T00:00:00.000Z", "2022-05-06T12:01:00.000Z", "2022-05-06T12:01:00.000Z"]


def test_date_parse_failure_is_a_null_with_a_warning(esql, esql_warnings) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW d = DATE_PARSE("yyyy-MM-dd", "not a date")')
    assert rows == [[None]]
    assert esql_warnings('ROW d = DATE_PARSE("yyyy-MM-dd", "not a date")')


def test_bucket_on_dates(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql(f"FROM {PROC} | STATS c = COUNT(*) BY b = BUCKET(@timestamp, 1 day) | SORT b")
    assert cols == [("c", "long"), ("b", "date")]
    assert rows == [[5, "2024-05-01T00:00:00.000Z"], [3, "2024-05-02T00:00:00.000Z"]]
    _, rows = esql(f'FROM {PROC} | STATS c = COUNT(*) BY b = BUCKET(@timestamp, 20, "2024-05-01T00:00:00Z", '
                   '"2024-05-03T00:00:00Z") | SORT b')  # fmt: skip
    assert sum(r[0] for r in rows) == 8 and all(r[1].endswith(":00:00.000Z") for r in rows)


def test_bucket_only_groups(esql_error) -> None:  # type: ignore[no-untyped-def]
    err = esql_error(f"FROM {PROC} | EVAL b = BUCKET(@timestamp, 1 hour)")
    assert "cannot be used outside the BY clause of STATS" in err.reason


def test_dates_render_as_iso_millis_utc(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql(f"FROM {PROC} | SORT @timestamp | LIMIT 1 | KEEP @timestamp")
    assert rows == [["2024-05-01T10:00:00.000Z"]]
    _, rows = esql('ROW d = TO_DATETIME("2024-05-01T10:00:00+02:00"), e = TO_DATETIME(0)')
    assert rows == [["2024-05-01T08:00:00.000Z", "1970-01-01T00:00:00.000Z"]]


def test_zero_or_negative_intervals_are_refused(esql_error) -> None:  # type: ignore[no-untyped-def]
    for q in ["ROW d = NOW() | EVAL t = DATE_TRUNC(-3 hours, d)", "ROW d = NOW() | EVAL t = DATE_TRUNC(0 days, d)",
              'ROW d = NOW() | EVAL t = DATE_TRUNC(TO_TIMEDURATION("-5 minutes"), d)',
              f"FROM {PROC} | STATS c = COUNT(*) BY b = BUCKET(@timestamp, -1 day)"]:  # fmt: skip
        assert "Zero or negative time interval is not supported" in esql_error(q).reason


def test_negative_spans_in_arithmetic(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW d = TO_DATETIME("2024-05-01T10:00:00Z") | EVAL a = d + (0 year - 1 year), b = d - (1 hour - 3 hours)')
    assert rows[0][1:] == ["2023-05-01T10:00:00.000Z", "2024-05-01T12:00:00.000Z"]


@pytest.mark.parametrize("n, lo, hi, span", [
    (20, "1985-01-01T00:00:00Z", "1986-01-01T00:00:00Z", (1, "month")),   # the reference: monthly buckets
    (100, "1985-01-01T00:00:00Z", "1986-01-01T00:00:00Z", (1, "week")),   # ... and weekly ones for 100
    (10, "1985-01-01T00:00:00Z", "1986-01-01T00:00:00Z", (1, "year")),    # too few for months: a year
    (24, "2024-05-01T00:00:00Z", "2024-05-02T00:00:00Z", (1, "hour")),
    (23, "2024-05-01T00:00:00Z", "2024-05-02T00:00:00Z", (3, "hour")),
    (3, "2024-05-01T00:00:00Z", "2024-05-01T00:00:10Z", (5, "second")),
    (10, "2024-05-01T00:00:00Z", "2024-05-01T00:00:01Z", (100, "millisecond")),
    # weeks are counted from the Monday before `from`: 1985-01-01 was a Tuesday, so 4 weeks end on 1985-01-28
    (4, "1985-01-01T00:00:00Z", "1985-01-28T00:00:00Z", (1, "week")),
    (4, "1985-01-01T00:00:00Z", "1985-01-28T00:00:01Z", (1, "month")),  # one second more: weeks fail, months do
])  # fmt: skip
def test_bucket_picks_the_rounding_as_elasticsearch_does(n: int, lo: str, hi: str, span: tuple[int, str]) -> None:
    from pytest_soclab.store.esql.bucket import _pick_date_span
    from pytest_soclab.store.layout import parse_date_ms

    assert _pick_date_span(n, parse_date_ms(lo), parse_date_ms(hi)) == span


@pytest.mark.parametrize("n, lo, hi, step", [(20, 25324, 74999, 5000.0), (10, 0, 100, 10.0), (10, 0, 40, 5.0),
                                             (3, 0, 1, 0.5), (7, 0, 1000, 500.0)])  # fmt: skip
def test_numeric_bucket_span_is_a_power_of_ten_or_its_half(n: int, lo: float, hi: float, step: float) -> None:
    from pytest_soclab.store.esql.bucket import _nice_step

    assert _nice_step((hi - lo) / n) == step


def test_numeric_bucket_through_a_query(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql(f"FROM {PROC} | STATS c = COUNT(*) BY b = BUCKET(process.pid, 20, 0, 100000) | SORT b")
    assert rows and all(r[1] % 5000 == 0 for r in rows)

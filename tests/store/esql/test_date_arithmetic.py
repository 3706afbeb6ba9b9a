"""Date arithmetic with time spans and calendar periods, wherever an expression may stand."""

from __future__ import annotations

from store_testdata import PROC

T = 'TO_DATETIME("2024-05-01T10:30:45.123Z")'


def test_periods_and_durations_add_and_subtract(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql(f"ROW d = {T} | EVAL y = d + 1 year, h = d - 3 hours, mo = d + 1 month + 2 days, "
                      "w = d + 2 weeks, q = d + 1 quarter, s = d + 1 second, ms = d + 500 milliseconds")  # fmt: skip
    assert [t for _, t in cols] == ["date"] * 8
    assert rows == [["2024-05-01T10:30:45.123Z", "2025-05-01T10:30:45.123Z", "2024-05-01T07:30:45.123Z",
                     "2024-06-03T10:30:45.123Z", "2024-05-15T10:30:45.123Z", "2024-08-01T10:30:45.123Z",
                     "2024-05-01T10:30:46.123Z", "2024-05-01T10:30:45.623Z"]]  # fmt: skip


def test_month_end_is_clamped(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW d = TO_DATETIME("2024-01-31T10:00:00Z") | EVAL a = d + 1 month, b = d + 1 year')
    assert rows[0][1:] == ["2024-02-29T10:00:00.000Z", "2025-01-31T10:00:00.000Z"]


def test_span_first_and_chained(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql(f"ROW d = {T} | EVAL x = 1 day + d, y = d + 1 hour - 30 minutes, z = d + (1 hour + 30 minutes)")
    assert rows[0][1:] == ["2024-05-02T10:30:45.123Z", "2024-05-01T11:00:45.123Z", "2024-05-01T12:00:45.123Z"]


def test_string_literals_next_to_spans_are_dates(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = "2024-05-01" + 1 day, b = 1 day + "2024-05-01"')
    assert rows == [["2024-05-02T00:00:00.000Z", "2024-05-02T00:00:00.000Z"]]
    _, rows = esql(f'FROM {PROC} | WHERE @timestamp >= "2024-05-02T00:00:00Z" - 1 hour | STATS c = COUNT(*)')
    assert rows == [[3]]


def test_spans_in_where_and_against_now(esql) -> None:  # type: ignore[no-untyped-def]
    # the backend's clock is 2024-05-02T12:30
    _, rows = esql(f"FROM {PROC} | WHERE @timestamp > NOW() - 1 day | STATS c = COUNT(*)")
    assert rows == [[3]]
    _, rows = esql(f'FROM {PROC} | WHERE @timestamp > TO_DATETIME("2024-05-01") + 1 day | KEEP @timestamp | SORT @timestamp')
    assert [r[0] for r in rows] == ["2024-05-02T09:00:00.000Z", "2024-05-02T09:10:00.000Z", "2024-05-02T12:00:00.000Z"]


def test_spans_as_function_arguments(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql(f"ROW d = {T} | EVAL a = DATE_TRUNC(1 hour, d + 90 minutes), b = DATE_TRUNC(TO_TIMEDURATION(\"15 minutes\"), d)")
    assert rows[0][1:] == ["2024-05-01T12:00:00.000Z", "2024-05-01T10:30:00.000Z"]


def test_to_timeduration_and_to_dateperiod(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW x = "2024-01-01"::datetime | EVAL y = x + "3 hours"::time_duration, z = x - TO_TIMEDURATION("3 hours")')
    assert rows == [["2024-01-01T00:00:00.000Z", "2024-01-01T03:00:00.000Z", "2023-12-31T21:00:00.000Z"]]
    _, rows = esql('ROW x = "2024-01-01"::datetime | EVAL y = x + "3 DAYS"::date_period, z = x - TO_DATEPERIOD("3 days")')
    assert rows == [["2024-01-01T00:00:00.000Z", "2024-01-04T00:00:00.000Z", "2023-12-29T00:00:00.000Z"]]


def test_spans_cannot_be_columns_and_bad_strings_are_named(esql_error) -> None:  # type: ignore[no-untyped-def]
    assert "EVAL does not support type [time_duration]" in esql_error("ROW a = 1 | EVAL b = 1 hour").reason
    err = esql_error('ROW d = "nope" + 1 day')
    assert err.type == "verification_exception" and "Cannot convert string [nope] to [DATETIME]" in err.reason
    assert "must be [datetime or numeric]" in esql_error('ROW d = "x" | EVAL e = d + 1 day').reason

"""Property tests for the duration parser and the fast timestamp formatter."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_soclab.corpus.timeutil import iso_ms, parse_duration_ms

_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


@given(
    st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(sorted(_UNITS))), min_size=1, max_size=4),
    st.booleans(),
)
def test_compound_durations(parts: list[tuple[int, str]], negative: bool) -> None:
    text = ("-" if negative else "") + "".join(f"{n}{u}" for n, u in parts)
    expected = sum(n * _UNITS[u] for n, u in parts) * (-1 if negative else 1)
    assert parse_duration_ms(text) == expected


@given(st.floats(0, 1e6, allow_nan=False))
def test_numbers_are_seconds(x: float) -> None:
    assert parse_duration_ms(x) == round(x * 1000)


@given(st.text(max_size=12))
def test_garbage_is_a_clear_error_or_a_duration(text: str) -> None:
    try:
        v = parse_duration_ms(text)
    except ValueError as exc:
        assert "not a duration" in str(exc)
    else:
        assert isinstance(v, int)


@pytest.mark.parametrize("bad", ["", "5x", "m5", "1m1", "--5s", True])
def test_bad_durations(bad) -> None:
    with pytest.raises(ValueError):
        parse_duration_ms(bad)


@given(st.integers(0, 4_102_444_800_000))  # 1970 .. 2100
def test_iso_ms_matches_datetime(ms: int) -> None:
    dt = datetime.fromtimestamp(ms / 1000, UTC)
    expected = dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
    assert iso_ms(ms) == expected

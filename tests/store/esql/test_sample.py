"""SAMPLE: each row kept with the given probability."""

from __future__ import annotations

from store_testdata import PROC


def test_sample_keeps_a_subset(esql) -> None:  # type: ignore[no-untyped-def]
    for _ in range(3):
        _, rows = esql(f"FROM {PROC} | SAMPLE 0.5 | STATS c = COUNT(*)")
        assert 0 <= rows[0][0] <= 8
    _, rows = esql(f"FROM {PROC} | SAMPLE 0.999999 | KEEP host.name | LIMIT 100")
    assert len(rows) <= 8


def test_sample_probability_must_be_between_0_and_1(esql_error) -> None:  # type: ignore[no-untyped-def]
    for p in ("1.5", "0", "1"):
        err = esql_error(f"FROM {PROC} | SAMPLE {p}")
        assert err.type == "verification_exception" and "between 0 and 1" in err.reason

"""Statistics against values computed by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_soclab import stats


# ---------------------------------------------------------------- Wilson


def test_wilson_8_of_10_by_hand() -> None:
    # z = 1.959964, z^2 = 3.841459; denom = 1 + z^2/10 = 1.3841459
    # center = (0.8 + z^2/20) / denom = 0.9920729 / 1.3841459 = 0.716744
    # half = z/denom * sqrt(0.8*0.2/10 + z^2/400) = 1.416006 * 0.1600113 = 0.226577
    lo, hi = stats.wilson_interval(8, 10)
    assert lo == pytest.approx(0.716744 - 0.226577, abs=1e-5)
    assert hi == pytest.approx(0.716744 + 0.226577, abs=1e-5)


def test_wilson_zero_successes_by_hand() -> None:
    # p = 0: upper = z^2/n / (1 + z^2/n) = 0.3841459 / 1.3841459 = 0.277533
    assert stats.wilson_interval(0, 10) == (0.0, pytest.approx(0.277533, abs=1e-6))
    assert stats.wilson_interval(10, 10) == (pytest.approx(1 - 0.277533, abs=1e-6), 1.0)


def test_wilson_90_percent_changes_z() -> None:
    # z(0.90) = 1.644854; 1 of 2: p = .5, z^2 = 2.705543, denom = 2.3527715, center = 0.5
    # half = 1.644854/2.3527715 * sqrt(0.125 + 2.705543/16) = 0.6991145 * 0.5423058 = 0.379133
    lo, hi = stats.wilson_interval(1, 2, confidence=0.90)
    assert lo == pytest.approx(0.5 - 0.379133, abs=1e-5)
    assert hi == pytest.approx(0.5 + 0.379133, abs=1e-5)


def test_wilson_empty_and_bad_input() -> None:
    assert stats.wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="cannot exceed"):
        stats.wilson_interval(3, 2)
    with pytest.raises(ValueError, match="negative"):
        stats.wilson_interval(-1, 2)
    with pytest.raises(ValueError, match="confidence"):
        stats.wilson_interval(1, 2, confidence=1.0)


def test_z_value() -> None:
    assert stats.z_value(0.95) == pytest.approx(1.959964, abs=1e-6)


# ---------------------------------------------------------------- bootstrap


def test_bootstrap_degenerate_cases() -> None:
    assert stats.bootstrap_mean_interval([]) == (0.0, 1.0)
    assert stats.bootstrap_mean_interval([], empty=(0.0, 100.0)) == (0.0, 100.0)
    assert stats.bootstrap_mean_interval([0.7]) == (0.7, 0.7)
    assert stats.bootstrap_mean_interval([0.4, 0.4, 0.4]) == (0.4, 0.4)


def test_bootstrap_two_values_percentile_by_hand() -> None:
    # Resampling [0, 1] twice gives means 0 (p=1/4), 0.5 (1/2), 1 (1/4): the 2.5 % and 97.5 %
    # quantiles of that distribution are 0 and 1.
    assert stats.bootstrap_mean_interval([0.0, 1.0], method="percentile") == (0.0, 1.0)


def test_bootstrap_is_deterministic_per_seed() -> None:
    vals = [0.1, 0.5, 0.9, 0.3, 0.7, 0.65, 0.2]
    a = stats.bootstrap_mean_interval(vals, seed=3)
    assert a == stats.bootstrap_mean_interval(vals, seed=3)
    assert a != stats.bootstrap_mean_interval(vals, seed=4)


@pytest.mark.parametrize("method", ["BCa", "percentile"])
def test_bootstrap_matches_normal_theory_for_large_n(method: str) -> None:
    # 50 ones and 50 zeros: mean 0.5, standard error sqrt(.25/100) = 0.05, so the interval is
    # close to 0.5 -+ 1.96 * 0.05 = (0.402, 0.598).
    vals = [1.0] * 50 + [0.0] * 50
    lo, hi = stats.bootstrap_mean_interval(vals, n_resamples=4000, method=method)  # type: ignore[arg-type]
    assert lo == pytest.approx(0.402, abs=0.02)
    assert hi == pytest.approx(0.598, abs=0.02)


def test_bootstrap_stays_within_data_range() -> None:
    vals = [0.0, 0.0, 0.0, 0.0, 1.0]
    lo, hi = stats.bootstrap_mean_interval(vals)
    assert 0.0 <= lo <= 0.2 <= hi <= 1.0


def test_bootstrap_rejects_nan() -> None:
    with pytest.raises(ValueError, match="finite"):
        stats.bootstrap_mean_interval([0.1, float("nan")])


def test_weighted_family_score_by_hand() -> None:
    # (2 * mean(0.5, 1.0) + 1 * mean(0, 0.3)) / 3 = (1.5 + 0.15) / 3 = 0.55
    groups = {"a": [0.5, 1.0], "b": [0.0, 0.3]}
    assert stats.weighted_family_score(groups, {"a": 2, "b": 1}) == pytest.approx(0.55)


def test_weighted_interval_constant_families_by_hand() -> None:
    # Every family constant: the interval is the point (3 * 0.9 + 1 * 0.1) / 4 = 0.7.
    groups = {"easy": [0.9, 0.9], "hard": [0.1], "unused": [], "ignored": [0.0, 1.0]}
    lo, hi = stats.bootstrap_weighted_interval(groups, {"easy": 3, "hard": 1, "ignored": 0})
    assert lo == pytest.approx(0.7) and hi == pytest.approx(0.7)


def test_weighted_interval_resamples_within_families() -> None:
    # Family "a" is constant at 1.0 with weight 1, "b" is [0, 1] with weight 1.
    # The score is (1 + mean_b) / 2 and mean_b ranges over {0, .5, 1}: percentile interval (0.5, 1.0).
    lo, hi = stats.bootstrap_weighted_interval({"a": [1.0, 1.0], "b": [0.0, 1.0]}, {}, method="percentile")
    assert (lo, hi) == (pytest.approx(0.5), pytest.approx(1.0))


def test_weighted_interval_contains_point_and_is_deterministic() -> None:
    groups = {"x": [0.2, 0.4, 0.9, 0.5], "y": [1.0, 0.0, 1.0, 1.0, 0.0], "z": [0.3, 0.35]}
    w = {"x": 2.0, "y": 1.0, "z": 0.5}
    point = stats.weighted_family_score(groups, w)
    lo, hi = stats.bootstrap_weighted_interval(groups, w, seed=7)
    assert lo < point < hi
    assert (lo, hi) == stats.bootstrap_weighted_interval(dict(reversed(groups.items())), w, seed=7)


def test_weighted_interval_empty_and_bad() -> None:
    assert stats.bootstrap_weighted_interval({}, {}) == (0.0, 1.0)
    with pytest.raises(ValueError, match="negative"):
        stats.bootstrap_weighted_interval({"a": [1.0]}, {"a": -1})
    with pytest.raises(ValueError, match="positive weight"):
        stats.weighted_family_score({"a": []}, {})


# ---------------------------------------------------------------- pass^k / pass@k


def test_pass_hat_k_by_hand() -> None:
    # 3 of 4 repeats passed: pass^2 = C(3,2)/C(4,2) = 3/6 = 0.5; pass^1 = 3/4; pass^4 = 0
    assert stats.pass_hat_k(3, 4, 2) == pytest.approx(0.5)
    assert stats.pass_hat_k(3, 4, 1) == pytest.approx(0.75)
    assert stats.pass_hat_k(3, 4, 4) == 0.0
    assert stats.pass_hat_k(4, 4, 4) == 1.0


def test_pass_at_k_by_hand() -> None:
    # 1 of 4 passed: pass@2 = 1 - C(3,2)/C(4,2) = 1 - 3/6 = 0.5; pass@4 = 1; 0 passed: 0
    assert stats.pass_at_k(1, 4, 2) == pytest.approx(0.5)
    assert stats.pass_at_k(1, 4, 4) == 1.0
    assert stats.pass_at_k(0, 4, 3) == 0.0


def test_pass_k_bad_input() -> None:
    with pytest.raises(ValueError, match="cannot exceed the number of repeats"):
        stats.pass_hat_k(1, 2, 3)
    with pytest.raises(ValueError, match="at least 1"):
        stats.pass_at_k(1, 2, 0)


def test_mean_pass_hat_k() -> None:
    # a: 2/2 -> 1; b: 1/2 -> C(1,2)/C(2,2) = 0; c has one repeat: left out. Mean 0.5.
    out = {"a": [True, True], "b": [True, False], "c": [True]}
    assert stats.mean_pass_hat_k(out, 2) == pytest.approx(0.5)
    assert stats.mean_pass_hat_k({"c": [True]}, 2) is None


# ---------------------------------------------------------------- paired tests


def test_mcnemar_exact_by_hand() -> None:
    # b=1, c=6: P(X <= 1 | n=7, 1/2) = (1 + 7)/128 = 0.0625, two-sided 0.125
    assert stats.mcnemar_exact(1, 6) == pytest.approx(0.125)
    assert stats.mcnemar_exact(6, 1) == pytest.approx(0.125)
    # b=0, c=5: 2 * (1/32) = 0.0625
    assert stats.mcnemar_exact(0, 5) == pytest.approx(0.0625)
    # balanced: 1.0; nothing discordant: 1.0
    assert stats.mcnemar_exact(3, 3) == pytest.approx(1.0)
    assert stats.mcnemar_exact(0, 0) == 1.0
    with pytest.raises(ValueError):
        stats.mcnemar_exact(-1, 2)


def test_mcnemar_paired_counts() -> None:
    base = [True, True, False, False, False, True]
    prot = [True, False, True, True, True, True]
    assert stats.discordant_pairs(base, prot) == (1, 3)
    # n = 4, min 1: 2 * (1 + 4)/16 = 0.625
    assert stats.mcnemar_paired(base, prot) == pytest.approx(0.625)


def test_paired_permutation_by_hand() -> None:
    # d = [1, 1, 1]: of 8 sign patterns only +++ reaches mean 1 (and --- its mirror): p = 2/8
    assert stats.paired_permutation_test([1, 1, 1], [0, 0, 0]) == pytest.approx(0.25)
    # d = [.5, .2, -.1, .4], sum 1.0: sign patterns with sum >= 1.0 are (+,+,-,+) and (+,+,+,+):
    # 2 of 16, two-sided 4/16
    assert stats.paired_permutation_test([0.5, 0.2, 0.0, 0.4], [0, 0, 0.1, 0]) == pytest.approx(0.25)
    assert stats.paired_permutation_test([0.3, 0.3], [0.3, 0.3]) == 1.0
    with pytest.raises(ValueError, match="length"):
        stats.paired_permutation_test([1.0], [1.0, 2.0])


def test_paired_permutation_detects_large_shift() -> None:
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 1.0, 30)
    b = a - 0.3
    assert stats.paired_permutation_test(a, b) < 0.001
    assert stats.paired_permutation_test(a, b, seed=1) == stats.paired_permutation_test(a, b, seed=1)


def test_fisher_exact_by_hand() -> None:
    # table [[3, 0], [0, 3]]: hypergeometric P = 1/C(6,3) = 1/20 for the observed and its mirror: 0.1
    assert stats.fisher_exact(3, 3, 0, 3) == pytest.approx(0.1)
    assert stats.fisher_exact(1, 2, 1, 2) == pytest.approx(1.0)
    assert stats.fisher_exact(0, 0, 1, 2) == 1.0


def test_bootstrap_diff_interval() -> None:
    assert stats.bootstrap_diff_interval([0.5, 0.6], [0.4, 0.5]) == (pytest.approx(0.1), pytest.approx(0.1))
    lo, hi = stats.bootstrap_diff_interval([0.9, 0.8, 0.7, 1.0, 0.6], [0.1, 0.2, 0.3, 0.4, 0.2])
    assert 0 < lo < hi


# ---------------------------------------------------------------- kappa


def test_cohen_kappa_by_hand() -> None:
    # p_o = 4/5; p_e = .6*.4 + .4*.6 = .48; kappa = .32/.52 = 0.615385
    a = ["hit", "hit", "miss", "miss", "hit"]
    b = ["hit", "miss", "miss", "miss", "hit"]
    assert stats.cohen_kappa(a, b) == pytest.approx(0.32 / 0.52)


def test_cohen_kappa_three_labels_by_hand() -> None:
    # a = h h p m m m, b = h p p m m h: p_o = 4/6
    # p_e = (2/6)(2/6) [h] + (1/6)(2/6) [p] + (3/6)(2/6) [m] = (4 + 2 + 6)/36 = 1/3
    # kappa = (2/3 - 1/3) / (2/3) = 0.5
    a = ["hit", "hit", "partial", "miss", "miss", "miss"]
    b = ["hit", "partial", "partial", "miss", "miss", "hit"]
    assert stats.cohen_kappa(a, b) == pytest.approx(0.5)


def test_cohen_kappa_edges() -> None:
    assert stats.cohen_kappa(["hit"] * 3, ["hit"] * 3) == 1.0
    # complete disagreement on two balanced labels: p_o 0, p_e .5: -1
    assert stats.cohen_kappa(["hit", "miss"], ["miss", "hit"]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        stats.cohen_kappa([], [])
    with pytest.raises(ValueError):
        stats.cohen_kappa(["hit"], [])
    assert not math.isnan(stats.cohen_kappa(["hit", "hit"], ["hit", "miss"]))


def test_permutation_test_with_one_pair_is_no_evidence() -> None:
    from pytest_soclab.stats import paired_permutation_test

    assert paired_permutation_test([1.0], [0.0]) == 1.0

"""Statistics for the summary and for `soclab compare`: plain functions over plain numbers.

Which method and why:

- rates (pass rate, attack-success rate, false-block rate): the Wilson score interval. It stays inside
  [0, 1], is not degenerate at 0 or n successes (where the Wald interval collapses to a point), and has
  close to nominal coverage for the small n a benchmark has.
- mean scores: a bootstrap interval (BCa by default, which corrects the bias and skew a bounded score
  distribution has; percentile when BCa is degenerate). Scores are bounded, skewed and few: no normal
  assumption. The weighted family score resamples within each family, as the families were sampled.
- pass^k: the unbiased estimator C(c, k) / C(n, k) of the probability that k independent repeats all
  pass; pass@k: 1 - C(n - c, k) / C(n, k), that at least one of k passes.
- paired pass/fail (baseline vs protected, run A vs run B on the same items): the exact McNemar test,
  a two-sided binomial test on the discordant pairs. Exact because discordant counts are small.
- paired scores (run A vs run B, item by item): a sign-flip permutation test on the mean difference.
  It tests the mean (what a family score is), is exact for n <= 13 (all 2^n sign patterns enumerated),
  and needs no normality; the Wilcoxon signed-rank test is avoided because benchmark scores are full of
  ties and zero differences, and it tests a pseudo-median rather than the mean.
- unpaired rates (one item's repeats in run A vs run B): Fisher's exact test on the 2x2 table.
- agreement between two judges: Cohen's kappa over the checkpoint verdicts.

Every function is deterministic: bootstrap and permutation draws come from a seeded generator.
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import Any, Literal

import numpy as np


Interval = tuple[float, float]
BootstrapMethod = Literal["BCa", "percentile", "basic"]

# scipy >= 1.15 takes `rng`; older versions only `random_state`. Both accept a Generator.

@functools.cache
def _scipy() -> Any:
    """scipy.stats, imported on first use: it costs ~0.8 s, and most pytest runs never need it."""
    from scipy import stats

    return stats


@functools.cache
def _rng_kw() -> str:
    return "rng" if "rng" in inspect.signature(_scipy().bootstrap).parameters else "random_state"


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {confidence!r}")


def _check_counts(successes: int, n: int) -> None:
    if n < 0 or successes < 0:
        raise ValueError(f"counts must not be negative (successes={successes}, n={n})")
    if successes > n:
        raise ValueError(f"successes ({successes}) cannot exceed n ({n})")


def z_value(confidence: float) -> float:
    """The two-sided normal quantile for a confidence level (1.959964... for 0.95)."""
    _check_confidence(confidence)
    # The standard library's quantile (Wichura's AS241, within an ulp of scipy's): a run whose scores
    # need no bootstrap then never pays scipy.stats' import (about a second) at the session's end.
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


# --------------------------------------------------------------------------- rates


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion. n == 0 gives (0.0, 1.0): nothing is known."""
    _check_counts(successes, n)
    _check_confidence(confidence)
    if n == 0:
        return (0.0, 1.0)
    z = z_value(confidence)
    z2 = z * z
    p = successes / n
    denom = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = (z / denom) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # At 0 or n successes the bound is exactly 0 or 1; say so rather than leave rounding noise.
    lo = 0.0 if successes == 0 else max(0.0, center - half)
    hi = 1.0 if successes == n else min(1.0, center + half)
    return (lo, hi)


# --------------------------------------------------------------------------- bootstrap


def _bootstrap(
    data: tuple[np.ndarray, ...],
    statistic,  # vectorized: (*samples, axis) -> array
    confidence: float,
    n_resamples: int,
    seed: int,
    method: BootstrapMethod,
) -> Interval:
    def run(m: str) -> Interval:
        with warnings.catch_warnings():
            # BCa on near-degenerate data warns and returns NaN; we fall back below instead.
            warnings.simplefilter("ignore")
            res = _scipy().bootstrap(
                data,
                statistic,
                n_resamples=n_resamples,
                vectorized=True,
                paired=False,
                confidence_level=confidence,
                method=m,
                **{_rng_kw(): np.random.default_rng(seed)},
            )
        return (float(res.confidence_interval.low), float(res.confidence_interval.high))

    lo, hi = run(method)
    if not (math.isfinite(lo) and math.isfinite(hi)) and method != "percentile":
        lo, hi = run("percentile")
    return (lo, hi)


def _as_array(values: Sequence[float], what: str) -> np.ndarray:
    arr = np.asarray(list(values), dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be a flat sequence of numbers")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be finite numbers (no NaN or infinity)")
    return arr


def bootstrap_mean_interval(
    values: Sequence[float],
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    *,
    method: BootstrapMethod = "BCa",
    empty: Interval = (0.0, 1.0),
) -> Interval:
    """Bootstrap confidence interval of the mean.

    No values: `empty` (default (0, 1), total ignorance on the 0..1 score scale). One value, or all
    values equal: the degenerate interval (v, v), since resampling cannot vary the mean.
    """
    _check_confidence(confidence)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    arr = _as_array(values, "values")
    if arr.size == 0:
        return (float(empty[0]), float(empty[1]))
    if arr.size == 1 or np.all(arr == arr[0]):
        v = float(arr[0])
        return (v, v)
    return _bootstrap((arr,), lambda x, axis: np.mean(x, axis=axis), confidence, n_resamples, seed, method)


def weighted_family_score(groups: Mapping[str, Sequence[float]], weights: Mapping[str, float]) -> float:
    """sum(w_f * mean_f) / sum(w_f) over the families that have values and a positive weight."""
    num = 0.0
    den = 0.0
    for name, vals in groups.items():
        w = float(weights.get(name, 1.0))
        if w < 0:
            raise ValueError(f"family {name!r} has a negative weight {w}")
        arr = _as_array(vals, f"scores of family {name!r}")
        if arr.size == 0 or w == 0:
            continue
        num += w * float(arr.mean())
        den += w
    if den == 0:
        raise ValueError("no family has both scores and a positive weight")
    return num / den


def bootstrap_weighted_interval(
    groups: Mapping[str, Sequence[float]],
    weights: Mapping[str, float],
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    *,
    method: BootstrapMethod = "BCa",
    empty: Interval = (0.0, 1.0),
) -> Interval:
    """Bootstrap interval of the weighted family score sum(w_f * mean_f) / sum(w_f).

    Each family is resampled within itself (families are strata). A family missing from `weights`
    weighs 1; families with no values or weight 0 are left out. Families whose values cannot vary
    (one value, or all equal) enter as constants.
    """
    _check_confidence(confidence)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    varying: list[tuple[float, np.ndarray]] = []
    const_num = 0.0
    den = 0.0
    for name in sorted(groups):  # sorted: the draw order must not depend on dict order
        w = float(weights.get(name, 1.0))
        if w < 0:
            raise ValueError(f"family {name!r} has a negative weight {w}")
        arr = _as_array(groups[name], f"scores of family {name!r}")
        if arr.size == 0 or w == 0:
            continue
        den += w
        if arr.size == 1 or np.all(arr == arr[0]):
            const_num += w * float(arr[0])
        else:
            varying.append((w, arr))
    if den == 0:
        return (float(empty[0]), float(empty[1]))
    if not varying:
        v = const_num / den
        return (v, v)
    ws = [w for w, _ in varying]

    def statistic(*samples: np.ndarray, axis: int) -> np.ndarray:
        total = const_num
        for w, s in zip(ws, samples):
            total = total + w * np.mean(s, axis=axis)
        return total / den

    return _bootstrap(tuple(a for _, a in varying), statistic, confidence, n_resamples, seed, method)


# --------------------------------------------------------------------------- repeats


def _check_k(successes: int, n: int, k: int) -> None:
    _check_counts(successes, n)
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if k > n:
        raise ValueError(f"k ({k}) cannot exceed the number of repeats n ({n})")


def pass_hat_k(successes: int, n: int, k: int) -> float:
    """pass^k: unbiased estimate of the probability that k independent repeats all pass, C(c,k)/C(n,k)."""
    _check_k(successes, n, k)
    return math.comb(successes, k) / math.comb(n, k)


def pass_at_k(successes: int, n: int, k: int) -> float:
    """pass@k: unbiased estimate of the probability that at least one of k repeats passes."""
    _check_k(successes, n, k)
    return 1.0 - math.comb(n - successes, k) / math.comb(n, k)


def mean_pass_hat_k(outcomes: Mapping[str, Sequence[bool]], k: int) -> float | None:
    """Mean pass^k over scenarios, each from its own repeats. Scenarios with fewer than k repeats are
    left out; None when none has k repeats."""
    vals = [pass_hat_k(sum(map(bool, o)), len(o), k) for o in outcomes.values() if len(o) >= k]
    return float(np.mean(vals)) if vals else None


# --------------------------------------------------------------------------- paired tests


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs b (pass->fail) and c (fail->pass).

    Under H0 a discordant pair goes either way with probability 1/2, so b ~ Binomial(b + c, 1/2).
    No discordant pairs: 1.0.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must not be negative (b={b}, c={c})")
    n = b + c
    if n == 0:
        return 1.0
    return float(min(1.0, _scipy().binomtest(min(b, c), n, 0.5, alternative="two-sided").pvalue))


def discordant_pairs(a: Sequence[bool], b: Sequence[bool]) -> tuple[int, int]:
    """(pass in a and fail in b, fail in a and pass in b) over paired outcomes."""
    if len(a) != len(b):
        raise ValueError(f"paired outcomes differ in length ({len(a)} vs {len(b)})")
    ab = sum(1 for x, y in zip(a, b) if x and not y)
    ba = sum(1 for x, y in zip(a, b) if y and not x)
    return ab, ba


def mcnemar_paired(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Exact McNemar p-value over paired pass/fail outcomes (same items, two conditions)."""
    return mcnemar_exact(*discordant_pairs(a, b))


def paired_permutation_test(
    a: Sequence[float], b: Sequence[float], n_resamples: int = 9999, seed: int = 0
) -> float:
    """Two-sided sign-flip permutation p-value for mean(a - b) == 0 over paired values.

    Exact (every sign pattern) when 2^n <= n_resamples, else Monte Carlo from the seeded generator.
    Fewer than two pairs, or no non-zero difference: 1.0.
    """
    x = _as_array(a, "a")
    y = _as_array(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"paired values differ in length ({x.size} vs {y.size})")
    d = x - y
    if d.size < 2 or not np.any(d != 0):
        return 1.0  # one pair (or no difference) is no evidence either way
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _scipy().permutation_test(
            (d,),
            lambda s, axis: np.mean(s, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=n_resamples,
            alternative="two-sided",
            **{_rng_kw(): np.random.default_rng(seed)},
        )
    return float(min(1.0, res.pvalue))


def fisher_exact(s1: int, n1: int, s2: int, n2: int) -> float:
    """Two-sided Fisher exact p-value that two independent rates s1/n1 and s2/n2 are equal."""
    _check_counts(s1, n1)
    _check_counts(s2, n2)
    if n1 == 0 or n2 == 0:
        return 1.0
    table = [[s1, n1 - s1], [s2, n2 - s2]]
    return float(_scipy().fisher_exact(table, alternative="two-sided").pvalue)


def bootstrap_diff_interval(
    a: Sequence[float],
    b: Sequence[float],
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    *,
    method: BootstrapMethod = "BCa",
) -> Interval:
    """Bootstrap interval of mean(a - b) over paired values (resampling the pairs)."""
    x = _as_array(a, "a")
    y = _as_array(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"paired values differ in length ({x.size} vs {y.size})")
    return bootstrap_mean_interval(
        x - y, confidence, n_resamples, seed, method=method, empty=(-1.0, 1.0)
    )


# --------------------------------------------------------------------------- agreement


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Cohen's kappa between two raters' labels of the same items: (p_o - p_e) / (1 - p_e).

    When chance agreement is certain (both raters used one and the same label throughout) kappa is 0/0;
    we return 1.0 when they agree on everything (which they then do), as the agreement is perfect.
    """
    if len(a) != len(b):
        raise ValueError(f"raters labelled different numbers of items ({len(a)} vs {len(b)})")
    n = len(a)
    if n == 0:
        raise ValueError("cohen_kappa needs at least one labelled item")
    labels = sorted(set(a) | set(b))
    p_o = sum(1 for x, y in zip(a, b) if x == y) / n
    p_e = sum((list(a).count(lab) / n) * (list(b).count(lab) / n) for lab in labels)
    if math.isclose(p_e, 1.0):
        return 1.0 if math.isclose(p_o, 1.0) else 0.0
    return (p_o - p_e) / (1.0 - p_e)

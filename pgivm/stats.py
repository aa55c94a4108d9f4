"""Chi-square tests for the randomized systems' statistical tests (no SciPy needed).

The p-value of a chi-square statistic is the regularized upper incomplete gamma function
Q(df/2, x/2), computed by its series below a + 1 and by Lentz's continued fraction above
(Numerical Recipes, §6.2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def _upper_gamma_q(a: float, x: float) -> float:
    if x <= 0:
        return 1.0
    log_prefix = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:  # series for P, then Q = 1 - P
        term = total = 1.0 / a
        n = a
        for _ in range(10_000):
            n += 1
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefix))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(log_prefix) * h


def chi2_sf(statistic: float, df: int) -> float:
    """P(X >= statistic) for X ~ chi-square with df degrees of freedom."""
    return _upper_gamma_q(df / 2, statistic / 2)


def chi_square_uniform(counts: Sequence[int]) -> tuple[float, int, float]:
    """Goodness of fit of the counts to equal probabilities: (statistic, df, p-value)."""
    n = sum(counts)
    expected = n / len(counts)
    statistic = sum((c - expected) ** 2 / expected for c in counts)
    df = len(counts) - 1
    return statistic, df, chi2_sf(statistic, df)


def chi_square_homogeneity(first: Sequence[int], second: Sequence[int]) -> tuple[float, int, float]:
    """Do two count vectors over the same cells come from one distribution? (statistic, df, p)."""
    n1, n2 = sum(first), sum(second)
    statistic = 0.0
    cells = 0
    for a, b in zip(first, second):
        total = a + b
        if total == 0:
            continue
        cells += 1
        e1, e2 = total * n1 / (n1 + n2), total * n2 / (n1 + n2)
        statistic += (a - e1) ** 2 / e1 + (b - e2) ** 2 / e2
    df = max(cells - 1, 1)
    return statistic, df, chi2_sf(statistic, df)

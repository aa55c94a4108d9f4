"""Linear regression from a maintained cofactor matrix (§7.2 of the F-IVM paper).

The view ``SELECT cofactor(x1, ..., xm) FROM ...`` keeps (c, s, Q) over the join: the count, the
sums and the sums of products. With a design matrix X = [1, features] and a label y taken from
the same m columns, XᵀX and Xᵀy are blocks of

    M = [[c, sᵀ], [s, Q]]

so the least-squares fit solves (XᵀX) θ = Xᵀy without touching the join: O(m³) whatever its size.
R² comes from the same blocks: SSE = yᵀy − 2θᵀXᵀy + θᵀXᵀXθ, SST = yᵀy − (Σy)²/c.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pgivm.errors import PgivmError


@dataclass
class Regression:
    target: str
    features: list[str]
    intercept: float
    coefficients: dict[str, float]
    r2: float
    rows: int
    rank: int  # of XᵀX: below len(features) + 1, the features are collinear (lstsq's minimum-norm fit)


def solve(matrix: np.ndarray, names: list[str], target: str) -> Regression:
    """``matrix``: the (m+1)×(m+1) cofactor matrix, index 0 the constant 1, ``names`` the m features."""
    if target not in names:  # a bare column names the one cofactor column of that name (price for h.price)
        bare = [n for n in names if n.rsplit(".", 1)[-1] == target]
        if len(bare) != 1:
            why = "names several columns of the cofactor" if bare else "is not a column of the cofactor"
            raise PgivmError(f"--target {target} {why}", f"choose one of: {', '.join(bare or names)}")
        (target,) = bare
    c = matrix[0, 0]
    if c < 1:
        raise PgivmError("the join is empty: there is nothing to fit")
    y = names.index(target) + 1
    keep = [0] + [i + 1 for i, n in enumerate(names) if n != target]
    xtx = matrix[np.ix_(keep, keep)]
    xty = matrix[keep, y]
    theta, _, rank, _ = np.linalg.lstsq(xtx, xty, rcond=None)
    yty = matrix[y, y]
    sse = yty - 2 * theta @ xty + theta @ xtx @ theta
    sst = yty - matrix[0, y] ** 2 / c
    features = [n for n in names if n != target]
    return Regression(target=target, features=features, intercept=float(theta[0]),
                      coefficients={n: float(t) for n, t in zip(features, theta[1:])},
                      r2=float(1 - sse / sst) if sst > 0 else float("nan"), rows=int(round(c)), rank=int(rank))

"""The display scale of a sum over unconstrained numeric columns, kept exact under deletes.

PostgreSQL shows ``sum(x)`` of a ``numeric`` column with as many decimals as the most precise value
summed (its dscale: ``sum`` of 1.50 and 2 is 3.50), and ``avg(x)`` divides that sum. A maintained
sum only grows in scale: after the 1.50 is deleted it reads 2.00 where PostgreSQL reads 2, and an
avg divides more digits. The largest scale among the rows still summed is a max, which a delete
cannot undo from the max alone; so each such sum keeps beside its value a *scales* column,

    T = Σ over the summed rows of B^(scale of the row's product),   B = 10^18,

a sum of products like the value itself (the scale of v·w is scale(v) + scale(w), so the factor of
each value is B^scale(v) and the ring's products carry it through the view tree unchanged). Each
row adds 1 to the base-B digit of its scale, so the highest non-zero digit is the largest scale
present: (number of decimal digits of T − 1) div 18, as long as fewer than 10^18 rows share a scale.
The read rounds the sum to it, which never changes its value (every row summed has at most that
many decimals) and gives it PostgreSQL's scale. NaN and ±Inf rows count 0, as PostgreSQL's own
running maximum skips them (numeric.c, do_numeric_accum).

A value with more than ``CAP`` decimals counts as ``CAP`` (so T stays far inside numeric's 131,072
digits), and a sum whose largest scale reads ``CAP`` or more is shown unrounded.
"""

from __future__ import annotations

from psycopg import sql

SCALES = "scales"
DIGITS = 18  # B = 10^DIGITS
CAP = 1000


def kept(kind: str) -> bool:
    """Whether a sum over a column of this type needs its scales kept: numeric without a typmod
    (numeric(p,s) has one scale; integers have none; floats are not shown with a dscale)."""
    return kind == "numeric"


def factor(value: sql.Composable, exponent: int) -> sql.Composable:
    """B^(scale of value^exponent): 0 for NULL, NaN and ±Inf (their scale() is NULL)."""
    scale = sql.SQL("pg_catalog.scale(({})::numeric)").format(value)
    return sql.SQL("coalesce(pg_catalog.power({b}, {e} * CASE WHEN {s} > {cap} THEN {cap} ELSE {s} END), 0)").format(
        b=sql.SQL("{}::numeric").format(sql.Literal(str(10 ** DIGITS))), e=sql.Literal(exponent), s=scale,
        cap=sql.Literal(CAP))


def rounded(value: sql.Composable, scales: sql.Composable) -> sql.Composable:
    """``value`` (a sum) shown with the largest scale its ``scales`` column holds."""
    scale = sql.SQL("((pg_catalog.length(pg_catalog.trunc({t})::text) - 1) / {d})").format(t=scales, d=sql.Literal(DIGITS))
    return sql.SQL("(CASE WHEN {s} < {cap} THEN pg_catalog.round({v}, {s}) ELSE {v} END)").format(
        s=scale, cap=sql.Literal(CAP), v=value)

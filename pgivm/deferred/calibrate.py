"""``pgivm calibrate``: measure each base table's cost function f_i(k) of a deferred view.

The paper's cost functions are "measured by experiments" (§4, Figure 4). For each base table and
each batch size k of a ladder, k of its rows (drawn at random, seeded) go into the table's log as
deleted and the log is processed exactly as an action does (each atom's net change, then the
system's own batch path), then again as inserted, inside a savepoint that is rolled back: the state
is left as it was. The time of a batch is the mean of the two, the median over ``repeats`` runs.

Measured points are seldom monotone or subadditive (the paper's "irregularities"); the planner's
guarantees need both (§1.3). We keep the monotone envelope of the points (a running maximum) and
fit f(k) = a·k + b to it by least squares with a, b >= 0: a line with a non-negative intercept is
monotone and subadditive. The fit is stored in the view's state (``deferred_table``), the points
beside it for ``status`` and the bench's plot.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import psycopg
from psycopg import sql

from pgivm.deferred import LoggedTable
from pgivm.errors import PgivmError
from pgivm.systems.common import Names

LADDER = (1, 4, 16, 64, 256, 1024)


@dataclass
class Fit:
    table: str
    points: list[tuple[int, float]]  # (k, median ms) as measured
    envelope: list[tuple[int, float]]  # the running maximum of the points
    a_ms: float
    b_ms: float


def fit_line(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares a·k + b with a >= 0 and b >= 0 (the constrained optimum lies on the boundary
    when the free one leaves it)."""
    if len(points) == 1:
        k, y = points[0]
        return 0.0, max(y, 0.0)
    ks = [float(k) for k, _ in points]
    ys = [y for _, y in points]
    mean_k, mean_y = statistics.fmean(ks), statistics.fmean(ys)
    spread = sum((k - mean_k) ** 2 for k in ks)
    a = sum((k - mean_k) * (y - mean_y) for k, y in zip(ks, ys)) / spread if spread else 0.0
    b = mean_y - a * mean_k
    if a < 0:  # flat: the best constant
        return 0.0, max(mean_y, 0.0)
    if b < 0:  # through the origin
        return max(sum(k * y for k, y in zip(ks, ys)) / sum(k * k for k in ks), 0.0), 0.0
    return a, b


def envelope(points: list[tuple[int, float]]) -> list[tuple[int, float]]:
    out, highest = [], 0.0
    for k, y in sorted(points):
        highest = max(highest, y)
        out.append((k, highest))
    return out


def _rows(conn: psycopg.Connection, base: sql.Composable) -> int:
    row = conn.execute(sql.SQL("SELECT count(*) FROM (SELECT FROM {} LIMIT {}) AS rows").format(
        base, sql.Literal(max(LADDER)))).fetchone()
    return int(row[0]) if row else 0


def calibrate(conn: psycopg.Connection, name: str, tables: list[LoggedTable], bases: dict[int, sql.Composable],
              ladder: tuple[int, ...] = LADDER, repeats: int = 3, seed: int = 1,
              progress: Callable[[str], None] | None = None) -> list[Fit]:
    """Measure and store f_i for every table of a deferred view, in the caller's transaction (which
    holds the view's lock: ``refresh`` first, so the state reflects the base tables)."""
    names = Names.of(name)
    for table in tables:
        if _rows(conn, bases[table.number]) == 0:
            raise PgivmError(f"table {table.label} is empty: calibrate times the batch path on its rows",
                             "load some data first (the more, the closer to what the view will see)")
    conn.execute(sql.SQL("SELECT {}()").format(names("refresh")))
    conn.execute("SELECT setseed(%s)", [(seed % 1000) / 1000])
    fits = []
    for table in tables:
        available = _rows(conn, bases[table.number])
        points = []
        for k in [k for k in ladder if k <= available] or [available]:
            runs = [_one_batch(conn, names, table, bases[table.number], k) for _ in range(repeats)]
            rows = round(statistics.fmean(r for r, _ in runs))  # log rows, the unit of the pending counts
            points.append((rows, statistics.median(t for _, t in runs)))
            if progress:
                progress(f"{table.label}: {k:,} rows: {points[-1][1]:.2f} ms")
        hull = envelope(points)
        a, b = fit_line(hull)
        conn.execute(sql.SQL("UPDATE {} SET a_ms = %s, b_ms = %s, calibrated = pg_catalog.now(), points = %s "
                             "WHERE number = %s").format(names("deferred_table")),
                     [a, b, json.dumps([[k, round(y, 4)] for k, y in points]), table.number])
        fits.append(Fit(table.label, points, hull, a, b))
    return fits


def _one_batch(conn: psycopg.Connection, names: Names, table: LoggedTable, base: sql.Composable,
               k: int) -> tuple[int, float]:
    """(log rows, milliseconds) of processing k base rows, as an action would: they go into the
    table's log as deleted and the log is processed, then again as inserted; rolled back."""
    elapsed = 0.0
    cols = sql.SQL(", ").join(sql.Identifier(c.column) for c in table.columns)
    with conn.transaction(force_rollback=True):
        conn.execute(sql.SQL("CREATE TEMPORARY TABLE pgivm_calibrate_rows ON COMMIT DROP AS "
                             "SELECT {} FROM {} ORDER BY random() LIMIT {}").format(cols, base, sql.Literal(k)))
        for sign in (-1, 1):
            conn.execute(sql.SQL("INSERT INTO {log} ({cols}, m) SELECT {cols}, {sign} FROM pgivm_calibrate_rows").format(
                log=names(table.log), cols=cols, sign=sql.Literal(sign)))
            started = time.perf_counter()
            conn.execute(sql.SQL("SELECT {}(%s)").format(names("deferred_process")), [table.number])
            elapsed += time.perf_counter() - started
    return k, elapsed * 1e3 / 2

"""``pgivm calibrate``: measure each base table's cost function f_i(k) of a deferred view.

The paper's cost functions are "measured by experiments" (§4, Figure 4). For each base table and
each batch size k of a ladder, k of its rows (drawn at random, seeded) go into the table's log as
deleted and the log is processed exactly as an action does (each atom's net change, then the
system's own batch path), then again as inserted, inside a savepoint that is rolled back: the state
is left as it was. The time of a batch is the mean of the two, the median over ``repeats`` runs.

Measured points are seldom monotone or subadditive (the paper's "irregularities"); the planner's
guarantees need both (§1.3). We keep the monotone envelope of the points (a running maximum) and
then its least concave majorant through (0, 0): the least concave function at or above every
point. A concave function with f(0) = 0 is subadditive, and as the minimum of its segments' lines,
a_j·k + b_j with a_j, b_j >= 0, it is also monotone; beyond the largest k measured, the last line
goes on. A line fitted through the points by least squares would be the paper's model, but it
passes below some of them: on an IVMε view it predicted 40 ms for a batch that took 95, and a
budget is a promise about what a read waits for. The lines are stored in the view's state
(``deferred_table``), the points beside them for ``status`` and the bench's plot.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import psycopg
from psycopg import sql

from pgivm.query.resolve import BaseTable

from pgivm.deferred import LoggedTable, describe_lines
from pgivm.errors import PgivmError
from pgivm.systems.common import Names

LADDER = (1, 4, 16, 64, 256, 1024)


@dataclass
class Fit:
    table: str
    points: list[tuple[int, float]]  # (k, median ms) as measured
    envelope: list[tuple[int, float]]  # the running maximum of the points
    lines: list[tuple[float, float]]  # (a ms, b ms): f(k) = min(a·k + b) for k > 0

    @property
    def function(self) -> str:
        return describe_lines([a for a, _ in self.lines], [b for _, b in self.lines])


def majorant(points: list[tuple[int, float]]) -> list[tuple[float, float]]:
    """The lines (a, b) of the least concave majorant through (0, 0) of the points' monotone
    envelope, left to right (an upper convex hull: a point on or under the chord of its
    neighbours is dropped)."""
    highest: dict[int, float] = {}
    for k, y in points:  # one point per k: the slowest
        highest[k] = max(highest.get(k, y), y)
    hull: list[tuple[float, float]] = [(0.0, 0.0)]
    for k, y in envelope(sorted(highest.items())):
        if k <= 0:
            continue
        while len(hull) >= 2:
            (k1, y1), (k2, y2) = hull[-2], hull[-1]
            if (y2 - y1) * (k - k1) <= (y - y1) * (k2 - k1):  # hull[-1] on or under the chord
                hull.pop()
            else:
                break
        hull.append((float(k), y))
    if len(hull) == 1:
        return [(0.0, 0.0)]
    lines = []
    for (k1, y1), (k2, y2) in zip(hull, hull[1:]):
        a = (y2 - y1) / (k2 - k1)
        lines.append((a, max(y1 - a * k1, 0.0)))
    return lines


def envelope(points: list[tuple[int, float]]) -> list[tuple[int, float]]:
    out, highest = [], 0.0
    for k, y in sorted(points):
        highest = max(highest, y)
        out.append((k, highest))
    return out


def _rows(conn: psycopg.Connection, base: BaseTable) -> int:
    row = conn.execute(sql.SQL("SELECT count(*) FROM (SELECT FROM {} AS b WHERE {} LIMIT {}) AS rows").format(
        base.ident, base.guard("b"), sql.Literal(max(LADDER)))).fetchone()
    return int(row[0]) if row else 0


def calibrate(conn: psycopg.Connection, name: str, tables: list[LoggedTable], bases: dict[int, BaseTable],
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
    conn.execute("SELECT pg_catalog.setseed(%s)", [(seed % 1000) / 1000])
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
        lines = majorant(points)
        conn.execute(sql.SQL("UPDATE {} SET a_ms = %s, b_ms = %s, calibrated = pg_catalog.now(), points = %s "
                             "WHERE number = %s").format(names("deferred_table")),
                     [[a for a, _ in lines], [b for _, b in lines], json.dumps([[k, round(y, 4)] for k, y in points]),
                      table.number])
        fits.append(Fit(table.label, points, envelope(points), lines))
    return fits


def _one_batch(conn: psycopg.Connection, names: Names, table: LoggedTable, base: BaseTable,
               k: int) -> tuple[int, float]:
    """(log rows, milliseconds) of processing k base rows, as an action would: they go into the
    table's log as deleted and the log is processed, then again as inserted; rolled back. The base
    table is read as pgivm reads one everywhere: named from its oid, with its tableoid guard, so a
    view or another table put under its name is never read."""
    elapsed = 0.0
    read = sql.SQL(", ").join(sql.SQL("b.{} AS {}").format(sql.Identifier(c.column), sql.Identifier(table.log_column(c.column)))
                              for c in table.columns)
    cols = sql.SQL(", ").join(sql.Identifier(table.log_column(c.column)) for c in table.columns)
    with conn.transaction(force_rollback=True):
        conn.execute(sql.SQL("CREATE TEMPORARY TABLE pgivm_calibrate_rows ON COMMIT DROP AS "
                             "SELECT {} FROM {} AS b WHERE {} ORDER BY pg_catalog.random() LIMIT {}").format(
            read, base.ident, base.guard("b"), sql.Literal(k)))
        for sign in (-1, 1):
            conn.execute(sql.SQL("INSERT INTO {log} ({cols}, m) SELECT {cols}, {sign} FROM pg_temp.pgivm_calibrate_rows").format(
                log=names(table.log), cols=cols, sign=sql.Literal(sign)))
            started = time.perf_counter()
            conn.execute(sql.SQL("SELECT {}(ARRAY[%s])").format(names("deferred_take")), [table.number])
            conn.execute(sql.SQL("SELECT {}(%s)").format(names("deferred_process")), [table.number])
            elapsed += time.perf_counter() - started
    return k, elapsed * 1e3 / 2

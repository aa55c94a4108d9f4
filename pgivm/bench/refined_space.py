"""Workload ``ivme-family``, fourth part: the space of a triangle count's state under single and
refined partitions ([L] Appendix D, Theorem 16) at ε = ½, against |D|, on data built for single
partitions' worst case, and what a single-row update costs in each.

The data at size n (q = √(n/5.25)): q A-values heavy in R, each joined to the same 3.5q B-values,
light in R and in S, each of which S joins to q/4 C-values of its own, each in one T-tuple. Single
partitions' V_RS = R_heavy · S_light then holds q · 3.5q · q/4 = Θ(n^(3/2)) entries; refined
partitions' V_RS = R_hl · S_lh needs C-values heavy in S, which there are none of: their state is the
relations and the degrees, Θ(n). No triangle closes, so the recount is cheap at every size.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import psycopg
from psycopg import sql

from pgivm import command, report
from pgivm.bench.common import VIEW, settle
from pgivm.bench.scaling import fit_loglog

QUERY = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a"
TABLES = {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}
MAX_SIZE = 100_000  # single partitions' views hold 0.875 q³ rows: 2.3 million at |D| = 10^5


def generate(n: int) -> dict[str, list[tuple[int, int]]]:
    q = max(4, round(math.sqrt(n / 5.25)))
    heavy, fan, out = q, int(3.5 * q), max(1, q // 4)
    return {"r": [(a, 1000 + b) for a in range(heavy) for b in range(fan)],
            "s": [(1000 + b, 10_000_000 + out * b + c) for b in range(fan) for c in range(out)],
            "t": [(10_000_000 + out * b + c, 7) for b in range(fan) for c in range(out)]}


def _load(conn: psycopg.Connection, rows: dict[str, list[tuple[int, int]]]) -> None:
    for table, columns in TABLES.items():
        ident = sql.Identifier(table)
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(ident))
        conn.execute(sql.SQL("CREATE TABLE {} ({} int NOT NULL, {} int NOT NULL)").format(ident, *map(sql.Identifier, columns)))
        with conn.cursor().copy(sql.SQL("COPY {} FROM STDIN").format(ident)) as copy:
            for row in rows[table]:
                copy.write_row(row)
        conn.execute(sql.SQL("CREATE INDEX ON {} ({}, {})").format(ident, *map(sql.Identifier, columns)))
    conn.execute("VACUUM ANALYZE r, s, t")
    settle(conn)


_STATE = """
    SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0), array_agg(c.relname::text)
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = %s AND c.relkind = 'r' AND c.relname NOT IN ('state', 'result') AND c.relname NOT LIKE '%%delta'"""
_READS = """
    SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(c.oid)), 0)
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind IN ('r', 'i')"""


@dataclass
class Result:
    n: int
    partitions: str
    build: float
    rows: int  # state rows: the relations, the degrees, the views
    bytes: int
    latencies: list[float] = field(default_factory=list)
    rows_read: list[int] = field(default_factory=list)


def measure(conn: psycopg.Connection, n: int) -> list[Result]:
    rows = generate(n)
    _load(conn, rows)
    size = sum(len(v) for v in rows.values())
    print(f"  |D| = {size:,}", file=sys.stderr, flush=True)
    out = []
    schema = f"pgivm_{VIEW}"
    heavy_a = rows["r"][0][0]
    for partitions in ("single", "refined"):
        started = time.perf_counter()
        command.create(VIEW, QUERY, system="ivme", epsilon=0.5, partitions=partitions, target=conn)
        build = time.perf_counter() - started
        conn.execute("VACUUM FULL")  # the state's own size, not the build's dead rows
        total, tables = conn.execute(_STATE, [schema]).fetchone()  # type: ignore[misc]
        count = sum(conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(schema, t))).fetchone()[0]  # type: ignore[index]
                    for t in tables)
        result = Result(size, partitions, build, count, int(total))
        for k in range(10):  # a heavy A-value's new partner, and the hub fan's B-values' new partners
            for statement, params in (("INSERT INTO r VALUES (%s, %s)", [heavy_a, 900 - k]),
                                      ("INSERT INTO s VALUES (%s, %s)", [1000 + k, 20 + k]),
                                      ("DELETE FROM r WHERE a = %s AND b = %s", [heavy_a, 900 - k]),
                                      ("DELETE FROM s WHERE b = %s AND c = %s", [1000 + k, 20 + k])):
                with conn.transaction():
                    before = conn.execute(_READS, [schema]).fetchone()[0]  # type: ignore[index]
                    t0 = time.perf_counter()
                    conn.execute(statement, params)
                    result.latencies.append(time.perf_counter() - t0)
                    result.rows_read.append(int(conn.execute(_READS, [schema]).fetchone()[0] - before))  # type: ignore[index]
        if not command.verify(VIEW, target=conn).ok:
            raise RuntimeError(f"ivme ({partitions} partitions) drifted at |D| = {size:,}")
        command.drop(VIEW, target=conn)
        out.append(result)
    return out


def main(conn: psycopg.Connection, sizes: Sequence[int]) -> list[Result]:
    sizes = [n for n in sizes if n <= MAX_SIZE] or [min(sizes)]
    print(f"\n== space of a triangle count's state, single and refined partitions ([L] Appendix D), ε = ½: {QUERY}; "
          f"data built for single partitions' worst case, sizes {', '.join(f'{n:,}' for n in sizes)} (up to {MAX_SIZE:,}: "
          "single partitions' views grow as |D|^(3/2))")
    sys.stdout.flush()
    results = [r for n in sizes for r in measure(conn, n)]
    report.print_table(["|D|", "partitions", "state rows", "state MB", "rows/|D|", "build (s)", "update median (ms)",
                        "rows read/update (median)"], [
        [f"{r.n:,}", r.partitions, f"{r.rows:,}", f"{r.bytes / 1e6:.1f}", f"{r.rows / r.n:.2f}", f"{r.build:.2f}",
         f"{1000 * statistics.median(r.latencies):.3f}", f"{statistics.median(r.rows_read):,.0f}"] for r in results])
    print("\nlog-log least-squares slopes of the state against |D|:")
    for partitions in ("single", "refined"):
        mine = [r for r in results if r.partitions == partitions]
        rows_fit = fit_loglog([r.n for r in mine], [r.rows for r in mine])
        bytes_fit = fit_loglog([r.n for r in mine], [r.bytes for r in mine])
        print(f"  {partitions}: state rows slope {'' if rows_fit is None else f'{rows_fit.slope:.2f}'}, bytes slope "
              f"{'' if bytes_fit is None else f'{bytes_fit.slope:.2f}'} (paper at ε = ½: "
              f"{'1.5' if partitions == 'single' else '1'})")
    return results

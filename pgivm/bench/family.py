"""The IVMε family's count workloads (``pgivm bench ivme-family``): one query over adversarial skew,
single-row updates of hub values, per-update time and rows read against N, each strategy in one
run. A workload (``loomis.py``, ``paths.py``) says what its tables hold and which rows its stream
inserts and then deletes; this module loads, creates each strategy's view, measures, verifies and
prints the table and the fitted log-log slopes.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import psycopg
from psycopg import sql

from pgivm import command, report
from pgivm.bench.common import VIEW, Strategy, cell, settle
from pgivm.bench.scaling import fit_loglog
from pgivm.progress import Progress

Row = tuple[int, ...]


@dataclass(frozen=True)
class Update:
    """One row of the stream: inserted into ``table``, later deleted from it."""

    table: str
    row: Row


@dataclass
class Database:
    rows: dict[str, list[Row]]
    stream: list[Update]  # inserted, then deleted
    probes: list[Update]  # more of them, for the untimed rows-read probes

    @property
    def size(self) -> int:
        return sum(len(r) for r in self.rows.values())


@dataclass(frozen=True)
class Workload:
    title: str  # "a Loomis-Whitney count of degree 4"
    query: str
    tables: dict[str, tuple[str, ...]]
    strategies: tuple[Strategy, ...]
    predicted: dict[str, float]  # the paper's exponent of the per-update work, per strategy name
    generate: Callable[[int, int, int], Database]  # (n, inserts, seed)
    stream_label: str  # "R1(hub, hub, hub)"


def _load(conn: psycopg.Connection, workload: Workload, rows: dict[str, list[Row]]) -> None:
    for table, columns in workload.tables.items():
        ident = sql.Identifier(table)
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(ident))
        conn.execute(sql.SQL("CREATE TABLE {} ({})").format(
            ident, sql.SQL(", ").join(sql.SQL("{} int NOT NULL").format(sql.Identifier(c)) for c in columns)))
        with conn.cursor().copy(sql.SQL("COPY {} FROM STDIN").format(ident)) as copy:
            for row in rows[table]:
                copy.write_row(row)
        conn.execute(sql.SQL("CREATE INDEX ON {} ({})").format(ident, sql.SQL(", ").join(map(sql.Identifier, columns))))
    conn.execute(sql.SQL("VACUUM ANALYZE {}").format(sql.SQL(", ").join(map(sql.Identifier, workload.tables))))
    settle(conn)


def _statements(workload: Workload, update: Update) -> tuple[sql.Composable, sql.Composable]:
    """The INSERT of the update's row and the DELETE of one copy of it."""
    table, columns = sql.Identifier(update.table), workload.tables[update.table]
    values = sql.SQL(", ").join(sql.Literal(v) for v in update.row)
    match = sql.SQL(" AND ").join(sql.SQL("{} = {}").format(sql.Identifier(c), sql.Literal(v)) for c, v in zip(columns, update.row))
    return (sql.SQL("INSERT INTO {} VALUES ({})").format(table, values),
            sql.SQL("DELETE FROM {t} WHERE ctid = (SELECT ctid FROM {t} WHERE {m} LIMIT 1)").format(t=table, m=match))


# Rows read by every table and index of the view's state and of the base tables' schema: first-order
# reads the base tables themselves (its delta queries), IVMε and F-IVM their state.
_STATE_READS = """
    SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(c.oid)), 0)
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE (n.nspname = %s OR c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = %s::regclass))
       AND c.relkind IN ('r', 'i')"""


def _rows_read(conn: psycopg.Connection, statement: sql.Composable, table: str) -> int:
    with conn.transaction():
        before = conn.execute(_STATE_READS, [f"pgivm_{VIEW}", table]).fetchone()[0]  # type: ignore[index]
        conn.execute(statement)
        after = conn.execute(_STATE_READS, [f"pgivm_{VIEW}", table]).fetchone()[0]  # type: ignore[index]
    return int(after - before)


@dataclass
class Result:
    n: int
    strategy: Strategy
    latencies: list[float] = field(default_factory=list)
    rows_read: list[int] = field(default_factory=list)
    build: float | None = None

    @property
    def median_ms(self) -> float:
        return 1000 * statistics.median(self.latencies)


def measure(conn: psycopg.Connection, workload: Workload, n: int, updates: int, budget: float, seed: int) -> list[Result]:
    db = workload.generate(n, updates // 2, seed)
    _load(conn, workload, db.rows)
    print(f"  N = {db.size:,} tuples", file=sys.stderr, flush=True)
    out = []
    for strategy in workload.strategies:
        result = Result(db.size, strategy)
        if strategy.name is not None:
            options = {"epsilon": strategy.epsilon} if strategy.name == "ivme" else {}
            result.build = command.create(VIEW, workload.query, system=strategy.name, target=conn, **options).seconds
            conn.execute("VACUUM ANALYZE")
            settle(conn)
            for update in db.probes:
                insert, delete = _statements(workload, update)
                result.rows_read += [_rows_read(conn, insert, update.table), _rows_read(conn, delete, update.table)]
        inserted = []
        with Progress(f"{strategy.label}: N = {db.size:,}, {workload.stream_label} updates", total=2 * len(db.stream)) as progress:
            for update in db.stream:
                if len(inserted) >= 10 and progress.elapsed > budget / 2:
                    break
                insert, delete = _statements(workload, update)
                started = time.perf_counter()
                conn.execute(insert)
                result.latencies.append(time.perf_counter() - started)
                inserted.append(delete)
                progress.advance()
            for delete in inserted:
                started = time.perf_counter()
                conn.execute(delete)
                result.latencies.append(time.perf_counter() - started)
                progress.advance()
        if strategy.name is not None:
            verified = command.verify(VIEW, target=conn)
            if not verified.ok:
                raise RuntimeError(f"{strategy.label} drifted at N = {db.size:,}: {verified.failures[:2]}")
            command.drop(VIEW, target=conn)
        out.append(result)
    return out


def main(conn: psycopg.Connection, workload: Workload, sizes: Sequence[int], updates: int, budget: float,
         seed: int) -> list[Result]:
    """Run, print the table and the fitted slopes."""
    print(f"\n== scaling of {workload.title}: {workload.query}; adversarial skew, sizes "
          f"{', '.join(f'{n:,}' for n in sizes)}; up to {updates:,} single-row updates of {workload.stream_label} per "
          "strategy and size (half inserts, then the same rows deleted)")
    sys.stdout.flush()
    results = [r for n in sizes for r in measure(conn, workload, n, updates, budget, seed)]
    probes = len(results[-1].rows_read) if results and results[-1].rows_read else 0
    print(f"\nper-update latency against N (rows read: tuples returned by the state's and the base tables' "
          f"indexes and scans, median of {probes} untimed probe updates):")
    report.print_table(["N (tuples)", "strategy", "updates", "median (ms)", "rows read/update", "build (s)"], [
        [f"{r.n:,}", r.strategy.label, f"{len(r.latencies):,}", f"{r.median_ms:.3f}",
         f"{statistics.median(r.rows_read):,.0f}" if r.rows_read else "", cell(r.build, 1)] for r in results])
    print("\nlog-log least-squares slopes against N:")
    for strategy in workload.strategies[1:]:
        mine = [r for r in results if r.strategy == strategy]
        bare = {r.n: r.median_ms for r in results if r.strategy.name is None}
        time_fit = fit_loglog([r.n for r in mine], [r.median_ms - bare[r.n] for r in mine])
        read_fit = fit_loglog([r.n for r in mine], [statistics.median(r.rows_read) for r in mine])
        print(f"  {strategy.label}: maintenance time (median − no view) slope "
              f"{'' if time_fit is None else f'{time_fit.slope:.2f}'}; rows read (state and base tables): slope "
              f"{'' if read_fit is None else f'{read_fit.slope:.2f}'} (paper: {workload.predicted[strategy.name or '']:g})")
    return results

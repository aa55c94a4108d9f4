"""What the workloads share: the base tables R, S, T, the view under test, and timed update streams.

Every workload runs on an autocommit connection to a scratch database: each statement is its own
transaction, the way an application writes, so a latency is one statement's round trip including
the view's triggers and the commit.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import psycopg
from psycopg import sql

from pgivm import command
from pgivm.errors import PgivmError
from pgivm.progress import Progress
from pgivm.systems import common as strategy_common

# The benchmarks' tables and views live in schema bench of their scratch database, which only the
# role running them may create in: their SQL names tables unqualified, and resolves them (and
# operators) there or in pg_catalog, never in public, where anyone may plant an operator.
BENCH_SCHEMA = "bench"
BENCH_PATH = "bench, pg_catalog, pg_temp"

TRIANGLE_SQL = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a"
LISTING_SQL = "SELECT r.a, r.b, s.c FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a"  # the triangles
TABLES: dict[str, tuple[str, str]] = {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}
VIEW = "bench_tri"  # the one view a workload has at a time

Row = tuple[int, int]


# --- base tables ------------------------------------------------------------------------------


def load_tables(conn: psycopg.Connection, rows: Mapping[str, Iterable[Row]]) -> None:
    """(Re)create R(a,b), S(b,c), T(c,a) with COPY, index each on its two columns, ANALYZE.

    The index is what the streams' own single-row DELETEs use to find their row, with or without
    a view, so the "no view" baseline is a fair floor.
    """
    for table, (x, y) in TABLES.items():
        ident = sql.Identifier(table)
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(ident))
        conn.execute(sql.SQL("CREATE TABLE {} ({} int NOT NULL, {} int NOT NULL)").format(
            ident, sql.Identifier(x), sql.Identifier(y)))
        copy_rows(conn, table, rows.get(table, ()))
        conn.execute(sql.SQL("CREATE INDEX ON {} ({}, {})").format(ident, sql.Identifier(x), sql.Identifier(y)))
    conn.execute("VACUUM ANALYZE r, s, t")
    settle(conn)


def settle(conn: psycopg.Connection) -> None:
    """CHECKPOINT after a load or a build, so that the checkpoint the bulk writes would soon start
    does not land in the middle of the timed stream (every commit there waits for a WAL flush).
    Needs superuser or pg_checkpoint; skipped without."""
    try:
        with conn.transaction():
            conn.execute("CHECKPOINT")
    except psycopg.errors.InsufficientPrivilege:
        pass


def copy_rows(conn: psycopg.Connection, table: str, rows: Iterable[Row]) -> int:
    """COPY rows into ``table`` in one statement, sent as one buffer; returns the number of rows."""
    data = copy_text(rows)
    x, y = TABLES[table]
    with conn.cursor().copy(sql.SQL("COPY {} ({}, {}) FROM STDIN").format(
            sql.Identifier(table), sql.Identifier(x), sql.Identifier(y))) as copy:
        copy.write(data)
    return data.count(b"\n")


def copy_text(rows: Iterable[Row]) -> bytes:
    """Rows in COPY's text format, built before any timing starts."""
    return "".join(f"{u}\t{v}\n" for u, v in rows).encode()


# --- the view under test ----------------------------------------------------------------------


@dataclass(frozen=True)
class Strategy:
    """A way of keeping the count: no view at all, or a pgivm strategy (with ε for ivme)."""

    name: str | None  # None: no view, the base tables alone
    epsilon: float = 0.5

    @property
    def label(self) -> str:
        if self.name is None:
            return "no view"
        return f"ivme ε={self.epsilon:g}" if self.name == "ivme" else self.name


NO_VIEW = Strategy(None)


@dataclass
class View:
    """A created view: its build time, and its state right after the build (before any stream).

    For ivme also θ = N^ε and how many values are heavy over R, S and T together, which tell
    what ε did to this data (e.g. no heavy value at all when θ exceeds every degree).
    """

    strategy: Strategy
    build_seconds: float
    state_bytes: int
    theta: float | None = None
    heavy_values: int | None = None


def create_view(conn: psycopg.Connection, strategy: Strategy, batch_threshold: int | None = None,
                query: str = TRIANGLE_SQL) -> View | None:
    """Create the view for ``strategy`` over R, S, T (None for no view) and measure its state.
    ``batch_threshold``: as ``pgivm create --batch-threshold`` (None: the default); ``query``: the
    triangle count, or another query over R, S, T (the listing)."""
    if strategy.name is None:
        return None
    options = {"epsilon": strategy.epsilon} if strategy.name == "ivme" else {}
    if strategy.name != "recompute":
        options["batch_threshold"] = batch_threshold
    created = command.create(VIEW, query, system=strategy.name, target=conn, **options)
    conn.execute("VACUUM ANALYZE")  # the new state tables, as autovacuum would do soon, maybe mid-stream
    settle(conn)
    info = command.status(VIEW, target=conn)
    view = View(strategy, created.seconds, sum(int(t["bytes"]) for t in info.tables))
    if strategy.name == "ivme":
        view.theta = float(info.figures["theta"])
        relations = info.sections[0]
        view.heavy_values = sum(int(row[relations.headers.index("heavy values")]) for row in relations.rows)
    return view


def verify_view(conn: psycopg.Connection, strategy: Strategy, after: str) -> None:
    """Recount and check the invariants; a drifted view makes the whole benchmark fail."""
    if strategy.name is None:
        return
    report = command.verify(VIEW, target=conn)
    if not report.ok:
        failures = "; ".join(str(f) for f in report.failures[:3])
        raise PgivmError(f"{strategy.label} drifted after {after}: maintained {report.maintained}, "
                         f"recount {report.recount}{'; ' + failures if failures else ''}")


def drop_view(conn: psycopg.Connection, strategy: Strategy) -> None:
    if strategy.name is not None:
        command.drop(VIEW, target=conn)


def rebalance_counters(conn: psycopg.Connection) -> tuple[int, int]:
    """(minor, major) rebalancings an ivme view has done so far: one cheap read of its state row."""
    row = conn.execute(sql.SQL("SELECT minor_rebalances, major_rebalances FROM {}").format(
        strategy_common.Names.of(VIEW)("state"))).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


_STATE_ROWS_READ = """
    SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(c.oid)), 0)
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = %s AND c.relkind IN ('r', 'i')
"""


@dataclass(frozen=True)
class Read:
    """Reading a view's first rows: its enumeration delay, as time and state rows read per row."""

    rows: int
    us_per_row: float
    state_rows_per_row: float


def read_first_rows(conn: psycopg.Connection, limit: int) -> Read:
    """``SELECT * FROM`` the view's first ``limit`` rows, timed, with the state rows it read (as
    ``state_rows_read`` counts them; the count in a transaction block of its own)."""
    schema = strategy_common.state_schema_for(VIEW)
    with conn.transaction():
        before = conn.execute(_STATE_ROWS_READ, [schema]).fetchone()
        started = time.perf_counter()
        rows = len(conn.execute(sql.SQL("SELECT * FROM {} LIMIT {}").format(sql.Identifier(VIEW), limit)).fetchall())
        seconds = time.perf_counter() - started
        after = conn.execute(_STATE_ROWS_READ, [schema]).fetchone()
    assert before is not None and after is not None
    per = max(rows, 1)
    return Read(rows, seconds * 1e6 / per, int(after[0] - before[0]) / per)


def state_rows_read(conn: psycopg.Connection, update: Update) -> int:
    """Rows the view's maintenance read for one update: tuples returned by every state table and index.

    Taken as the difference of the transaction's statistics counters around the statement, in a
    transaction block of its own (PostgreSQL does not flush them inside one). Not timed.
    """
    schema = strategy_common.state_schema_for(VIEW)
    with conn.transaction():
        before = conn.execute(_STATE_ROWS_READ, [schema]).fetchone()
        conn.execute(update.statement(), update.params)
        after = conn.execute(_STATE_ROWS_READ, [schema]).fetchone()
    assert before is not None and after is not None
    return int(after[0] - before[0])


# --- update streams ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Update:
    """One single-row statement: INSERT the row (x, y) into ``table``, or DELETE it."""

    table: str
    insert: bool
    x: int
    y: int

    @property
    def params(self) -> tuple[int, int]:
        return (self.x, self.y)

    def statement(self) -> sql.Composed:
        ident = sql.Identifier(self.table)
        if self.insert:
            return sql.SQL("INSERT INTO {} VALUES (%s, %s)").format(ident)
        first, second = TABLES[self.table]
        return sql.SQL("DELETE FROM {} WHERE {} = %s AND {} = %s").format(
            ident, sql.Identifier(first), sql.Identifier(second))


def inserts_then_deletes(rows: Sequence[tuple[str, int, int]]) -> list[Update]:
    """Insert every (table, x, y) one statement at a time, then delete them in the same order."""
    return [Update(t, True, x, y) for t, x, y in rows] + [Update(t, False, x, y) for t, x, y in rows]


@dataclass
class StreamResult:
    """Latencies of one stream under one strategy, with what the view cost to build and keep.

    ``rebalancing`` holds the indexes (into ``latencies``) of the updates during which an ivme
    view performed a minor or major rebalancing; ``rows_read`` the state rows read by a few probe
    updates (scaling only).
    """

    strategy: Strategy
    latencies: list[float]
    view: View | None = None
    minor_rebalances: int = 0
    major_rebalances: int = 0
    rebalancing: list[int] = field(default_factory=list)
    rows_read: list[int] = field(default_factory=list)
    read: Read | None = None  # a listing's first rows read back (scaling of a listing only)

    @property
    def label(self) -> str:
        return self.strategy.label

    @property
    def updates(self) -> int:
        return len(self.latencies)

    @property
    def per_second(self) -> float:
        """Statements per second of statement time (the summed latencies)."""
        return self.updates / sum(self.latencies)

    @property
    def median_ms(self) -> float:
        return 1000 * statistics.median(self.latencies)

    @property
    def p99_ms(self) -> float:
        return 1000 * percentile(self.latencies, 0.99)

    @property
    def max_ms(self) -> float:
        return 1000 * max(self.latencies)

    @property
    def rebalancing_ms(self) -> list[float]:
        return [1000 * self.latencies[i] for i in self.rebalancing]


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank q-quantile (q = 0.99: the value 99% of the samples do not exceed)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def run_stream(conn: psycopg.Connection, updates: Sequence[Update], strategy: Strategy,
               budget_seconds: float | None = None, title: str = "single-row updates") -> StreamResult:
    """Run ``updates`` one statement each, autocommit, timing every statement on the client.

    With an ivme view, the rebalancing counters are read after every statement (outside the
    timed window) to tell which updates paid for a rebalancing. With ``budget_seconds`` the
    stream must be ``inserts_then_deletes``: once half the budget is spent inserting, the
    remaining inserts are skipped, and only the rows actually inserted are deleted again.
    """
    track = strategy.name == "ivme"
    counters = rebalance_counters(conn) if track else (0, 0)
    first = counters
    result = StreamResult(strategy, [])
    todo = list(updates)
    with Progress(f"{strategy.label}: {title}", total=len(todo)) as progress:
        i = 0
        while i < len(todo):
            update = todo[i]
            if budget_seconds is not None and update.insert and i >= 10 and progress.elapsed > budget_seconds / 2:
                inserted = todo[:i]
                todo = inserted + [Update(u.table, False, u.x, u.y) for u in inserted]
                progress.total = len(todo)
                continue
            started = time.perf_counter()
            conn.execute(update.statement(), update.params)
            result.latencies.append(time.perf_counter() - started)
            if track:
                now = rebalance_counters(conn)
                if now != counters:
                    result.rebalancing.append(i)
                    counters = now
            progress.advance()
            i += 1
    result.minor_rebalances = counters[0] - first[0]
    result.major_rebalances = counters[1] - first[1]
    return result


def cell(value: float | None, digits: int = 1) -> str:
    """A number for a table cell, with thousands separators; blank for None."""
    return "" if value is None else f"{value:,.{digits}f}"


def megabytes(size: int | None) -> str:
    return "" if size is None else f"{size / 2**20:,.1f}"

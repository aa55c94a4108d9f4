"""``pgivm bench coverage``: the SQL of issue 22 under single-row writes, against pg_ivm.

Two tables, r(a, b) with ``rows`` rows over ``groups`` join values and s(b, c) mapping each join
value to one of ten groups, indexed as an application would index them (r on b and on (b, a), s on
b). Each case's view is created under every strategy in turn: no view, pgivm's default system for
the view when that is not first-order (F-IVM for values of one table, ``default (fivm)``), fivm
where it takes the view and is not its default (the DISTINCT view: the measurement behind
first-order's being its default, ``registry.tried``), first-order, recompute, and pg_ivm's
``create_immv`` when the server has the pg_ivm extension (``CREATE EXTENSION pg_ivm`` in the scratch
database; a view pg_ivm refuses says so).

- single-row writes: ``statements`` single-row statements, inserts into r alternating with
  deletes of one r row found through the index, each its own transaction;
- delete of the maximum: a group of ``group_rows`` rows, and ``deletes`` statements each deleting
  the group's current maximum of r.a (found through the index on (b, a)): pg_ivm recomputes the
  group from the base tables, first-order reads the next value from its index of the group's
  values.

Printed per case: mean and median milliseconds a statement, rows read per statement (tuples
returned and fetched from every table and index outside pg_catalog, over a few statements in a
transaction of their own, not timed), and the rate against no view and against pg_ivm. Every
pgivm view is verified after its stream (the bench fails if one differs from its recount).
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass

import psycopg
from psycopg import sql

from pgivm import command
from pgivm.errors import UnsupportedQuery
from pgivm.query.resolve import column_names
from pgivm.report import print_table

CASES = {
    "distinct": "SELECT DISTINCT r.a % 100 AS a, s.c FROM r JOIN s ON r.b = s.b",
    "min/max": "SELECT s.c, min(r.a) AS lo, max(r.a) AS hi, count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY s.c",
    "computed": ("SELECT s.c, sum(CASE WHEN r.a % 2 = 0 THEN r.a ELSE 0 END) AS even, count(*) AS n "
                 "FROM r JOIN s ON r.b = s.b GROUP BY s.c"),
    "condition across tables": "SELECT s.c, count(*) AS n FROM r JOIN s ON r.b = s.b AND r.a > s.c * 100 GROUP BY s.c",
    "outer join": "SELECT s.b AS sb, s.c, r.b, r.a FROM s LEFT JOIN r ON r.b = s.b",
    "exists": "SELECT r.a, r.b FROM r WHERE EXISTS (SELECT 1 FROM s WHERE s.b = r.b AND s.c < 5)",
    # kept as a derived table, recounted per touched group through r's index on (b, a); pg_ivm refuses it
    "aggregating subquery": ("SELECT s.c, x.n, x.top FROM s JOIN (SELECT b, count(*) AS n, max(a) AS top FROM r GROUP BY b) AS x "
                             "ON x.b = s.b"),
    # a correlated scalar subquery (TPC-H Q17's shape): joined as a derived table of each b's average
    "correlated scalar subquery": ("SELECT s.c, r.a FROM r JOIN s ON r.b = s.b "
                                   "WHERE r.a > (SELECT avg(r2.a) FROM r AS r2 WHERE r2.b = r.b)"),
    # an EXISTS read as a value: a LEFT JOIN with the DISTINCT b of s's small groups (pg_ivm refuses it)
    "exists as a value": "SELECT r.a, r.b, EXISTS (SELECT 1 FROM s WHERE s.b = r.b AND s.c < 5) AS small FROM r",
    # a subquery that aggregates over another: derived tables, the outer one's triggers on the inner one
    "nested subqueries": ("SELECT y.c, y.top FROM (SELECT x.c, max(x.n) AS top FROM (SELECT s.c, r.b, count(*) AS n "
                          "FROM r JOIN s ON r.b = s.b GROUP BY s.c, r.b) AS x GROUP BY x.c) AS y"),
    # a quantified comparison over an array constant: a condition on r's rows as they enter the state
    "= ANY": "SELECT s.c, count(*) AS n FROM r JOIN s ON r.b = s.b WHERE r.a % 100 = ANY (ARRAY[1, 2, 3]) GROUP BY s.c",
    # an IN read as a value: LEFT JOINs with the subquery's DISTINCT values and its counts (pg_ivm refuses it)
    "IN as a value": "SELECT r.a, r.b, r.b IN (SELECT s.b FROM s WHERE s.c < 5) AS small FROM r",
    # an EXISTS whose subquery holds an EXISTS: its count, a derived table with a semi-join inside
    "EXISTS in an EXISTS": ("SELECT s.b, s.c FROM s WHERE EXISTS (SELECT 1 FROM r WHERE r.a = 7 "
                            "AND EXISTS (SELECT 1 FROM s AS s2 WHERE s2.b = r.b AND s2.c = 3))"),
    # a LATERAL subquery correlated by an equality: a subquery joined on it (pg_ivm refuses LATERAL)
    "LATERAL": "SELECT s.c, x.a FROM s, LATERAL (SELECT r.a FROM r WHERE r.b = s.b AND r.a < 50) AS x",
}
# pg_ivm looks the rows of an outer join's view up by the join columns, which its documentation
# asks the user to index (it indexes a view's keys itself otherwise)
PG_IVM_INDEXES = {"outer join": ["sb", "b"]}
DELETE_MAX = "SELECT s.c, max(r.a) AS hi, count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY s.c"
STRATEGIES = ("no view", "default", "fivm", "first-order", "recompute", "pg_ivm")
VIEW = "bench_cov"
SKIP = "skip"  # what _create returns for a strategy that has no row for the view
# rows read by one statement: tuples every user table and index returned or fetched in this transaction
_ROWS_READ = """
    SELECT coalesce(sum(pg_catalog.pg_stat_get_xact_tuples_returned(c.oid)
                        + pg_catalog.pg_stat_get_xact_tuples_fetched(c.oid)), 0)
      FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'i') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
"""


@dataclass
class Config:
    rows: int = 100_000
    groups: int = 1_000
    statements: int = 400
    group_rows: int = 100_000
    deletes: int = 20
    seed: int = 1


@dataclass
class Run:
    latencies: list[float]
    rows_read: float


def _tables(conn: psycopg.Connection, config: Config, rows: int, groups: int, rng: random.Random) -> None:
    conn.execute("DROP TABLE IF EXISTS r, s CASCADE")
    conn.execute("CREATE TABLE r (a int NOT NULL, b int NOT NULL); CREATE TABLE s (b int NOT NULL, c int NOT NULL)")
    with conn.cursor().copy("COPY r FROM STDIN") as copy:
        for _ in range(rows):
            copy.write_row((rng.randrange(1000), rng.randrange(groups)))
    with conn.cursor().copy("COPY s FROM STDIN") as copy:
        for b in range(groups):
            copy.write_row((b, b % 10))
    conn.execute("CREATE INDEX ON r (b); CREATE INDEX ON r (b, a); CREATE INDEX ON s (b)")
    conn.execute("VACUUM ANALYZE r, s")


def has_pg_ivm(conn: psycopg.Connection) -> bool:
    """Whether the server offers pg_ivm; if so, it is created in the scratch database."""
    if conn.execute("SELECT 1 FROM pg_catalog.pg_available_extensions WHERE name = 'pg_ivm'").fetchone() is None:
        return False
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_ivm")
    return True


def _create(conn: psycopg.Connection, strategy: str, query: str, label: str = "") -> str | None:
    """The view under ``strategy``, or why it could not be made (for "default": the system chosen)."""
    if strategy == "no view":
        return None
    if strategy == "pg_ivm":
        try:
            with conn.transaction():
                conn.execute("SELECT pgivm.create_immv(%s, %s)", [VIEW, query])
                for column in PG_IVM_INDEXES.get(label, []):
                    conn.execute(sql.SQL("CREATE INDEX ON {} ({})").format(sql.Identifier(VIEW), sql.Identifier(column)))
        except psycopg.Error as error:
            return "refused: " + str(error).splitlines()[0][:90]
        return None
    if strategy == "default":
        return command.create(VIEW, query, target=conn).system
    if strategy == "fivm":  # beside the default only where it takes the view and is not the default itself
        if command.parse(query, columns_of=lambda table: column_names(conn, table))[0].name == "fivm":
            return SKIP
        try:
            command.create(VIEW, query, system="fivm", target=conn)
        except UnsupportedQuery:
            return SKIP
        return None
    command.create(VIEW, query, system=strategy, target=conn)
    return None



def _drop(conn: psycopg.Connection, strategy: str) -> None:
    if strategy == "pg_ivm":
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(VIEW)))
    elif strategy != "no view":
        assert command.verify(VIEW, target=conn).ok, f"{strategy}: the view differs from its recount"
        command.drop(VIEW, target=conn)


def _stream(conn: psycopg.Connection, statements: list[tuple[str, list[int]]]) -> Run:
    """Each statement timed in its own transaction; rows read over the first few, untimed, rolled back."""
    sample = statements[:10]
    read = 0
    for statement, params in sample:
        with conn.transaction(force_rollback=True):
            before = conn.execute(_ROWS_READ).fetchone()[0]  # type: ignore[index]
            conn.execute(statement, params)
            read += conn.execute(_ROWS_READ).fetchone()[0] - before  # type: ignore[index]
    latencies = []
    for statement, params in statements:
        started = time.perf_counter()
        conn.execute(statement, params)
        latencies.append(time.perf_counter() - started)
    return Run(latencies, read / max(len(sample), 1))


def _writes(config: Config, rng: random.Random) -> list[tuple[str, list[int]]]:
    out = []
    for i in range(config.statements):
        if i % 2 == 0:
            out.append(("INSERT INTO r VALUES (%s, %s)", [rng.randrange(1000), rng.randrange(config.groups)]))
        else:
            out.append(("DELETE FROM r WHERE ctid = (SELECT ctid FROM r WHERE b = %s LIMIT 1)", [rng.randrange(config.groups)]))
    return out


def _table(title: str, runs: dict[str, Run | str]) -> list[list[object]]:
    print(f"\n{title}")
    base = runs.get("no view")
    ivm = runs.get("pg_ivm")
    rows: list[list[object]] = []
    for strategy, run in runs.items():
        if isinstance(run, str):
            rows.append([strategy, run, "", "", "", ""])
            continue
        mean = statistics.fmean(run.latencies) * 1000
        rows.append([strategy, f"{mean:.2f}", f"{statistics.median(run.latencies) * 1000:.2f}", f"{run.rows_read:,.0f}",
                     f"{statistics.fmean(base.latencies) * 1000 / mean:.2f}x" if isinstance(base, Run) else "",
                     f"{statistics.fmean(ivm.latencies) * 1000 / mean:.1f}x" if isinstance(ivm, Run) else ""])
    print_table(["strategy", "ms/statement", "median ms", "rows read/statement", "rate vs no view", "faster than pg_ivm"],
                rows)
    return rows


def main(conn: psycopg.Connection, config: Config) -> dict[str, list[list[object]]]:
    pg_ivm = has_pg_ivm(conn)
    # a commit's WAL flush (milliseconds on this kind of disk) would be most of every statement's time
    conn.execute("SET synchronous_commit = off")
    strategies = [s for s in STRATEGIES if s != "pg_ivm" or pg_ivm]
    print(f"\n== coverage: views of issue 22 under single-row statements; r has {config.rows:,} rows over "
          f"{config.groups:,} join values; {'pg_ivm ' + _pg_ivm_version(conn) if pg_ivm else 'no pg_ivm on this server'}; synchronous_commit off ==")
    tables: dict[str, list[list[object]]] = {}
    for label, query in CASES.items():
        runs: dict[str, Run | str] = {}
        for strategy in strategies:
            rng = random.Random(config.seed)
            _tables(conn, config, config.rows, config.groups, rng)
            refused = _create(conn, strategy, query, label)
            if refused == SKIP:
                continue
            if strategy == "default":
                if refused == "first-order":  # the row below
                    command.drop(VIEW, target=conn)
                    continue
                strategy, refused = f"default ({refused})", None
            if refused:
                runs[strategy] = refused
                continue
            runs[strategy] = _stream(conn, _writes(config, rng))
            _drop(conn, strategy)
        tables[label] = _table(f"{label}: {query}; {config.statements} single-row statements (inserts and deletes)", runs)
    runs = {}
    for strategy in strategies:
        rng = random.Random(config.seed)
        _tables(conn, config, config.group_rows, 1, rng)
        refused = _create(conn, strategy, DELETE_MAX)
        if refused == SKIP:
            continue
        if strategy == "default":
            if refused == "first-order":
                command.drop(VIEW, target=conn)
                continue
            strategy, refused = f"default ({refused})", None
        if refused:
            runs[strategy] = refused
            continue
        deletes = [("DELETE FROM r WHERE ctid = (SELECT ctid FROM r WHERE b = 0 ORDER BY a DESC LIMIT 1)", [])] * config.deletes
        runs[strategy] = _stream(conn, deletes)
        _drop(conn, strategy)
    tables["delete max"] = _table(f"delete of the current maximum, a group of {config.group_rows:,} rows: {DELETE_MAX}; "
                                  f"{config.deletes} deletes", runs)
    conn.execute("DROP TABLE IF EXISTS r, s CASCADE")
    return tables


def _pg_ivm_version(conn: psycopg.Connection) -> str:
    row = conn.execute("SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'pg_ivm'").fetchone()
    return str(row[0]) if row else "?"

"""Workload ``load``: getting a graph into PostgreSQL and building a view over it, with and without Spark.

Each graph is an edge file: the one given with ``--edges`` (e.g. ego-Facebook) and a generated
power-law graph of ``--load-graph-edges`` edges (``graphs.power_law_graph``, written to a
temporary SNAP file). Both methods load the same rows: every undirected edge in both
directions, self-loops dropped, duplicates dropped. Per graph:

1. **Load into an empty table** (``src int NOT NULL, dst int NOT NULL``, no index), timed from
   reading the file to the commit:

   - *psycopg COPY*: the file read and deduplicated in Python, then one ``COPY ... FROM STDIN``;
   - *pgivm load* (``pgivm.spark.load``): Spark parses the file, writes it over JDBC
     (``reWriteBatchedInserts``) into an unlogged staging table, and one transaction moves it
     into the table with ``INSERT ... SELECT``.

   The two tables must then hold the same rows.
2. **Create** the triangle view at ε = ½ over R, S, T each holding the graph (both directions,
   indexed, as in the other workloads), once built in PostgreSQL (the default) and once with
   ``--preprocess spark``. Both counts must agree.
3. **Load under a view**: S and T hold the graph, R is empty; the same file is loaded into R by
   both methods, with no view and under an IVMε view (ε = ½, created on the empty R, untimed). Under
   the view the load is one multi-row statement, maintained set at a time by the view's statement
   triggers (the option ``pgivm load`` takes), and the view's count afterwards must equal the count of
   step 2. The alternative, dropping the view, loading, and building it again, costs the no-view
   load plus the PostgreSQL create of step 2; the workload prints both.

The Spark session is started once, before any graph, and its start-up (JVM, JDBC driver) is
reported on its own, as is a warm-up (a tiny ``pgivm load`` and a tiny Spark build, so class
loading and Python workers are not charged to the first graph). Every Spark figure in the tables
is with that warm session; a ``pgivm`` command line pays the start-up on every invocation.
No plain-SQL recount runs here: on a skewed graph of 10⁶ edges it would take far longer than
everything measured (the counts are checked against each other instead).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg import sql

from pgivm import command, report
from pgivm.bench import graphs
from pgivm.bench.common import BENCH_SCHEMA, TRIANGLE_SQL, VIEW, copy_text, load_tables, settle
from pgivm.bench.updates import base_rows
from pgivm.errors import PgivmError

EPSILON = 0.5
DEFAULT_GRAPH_EDGES = 1_000_000
DEFAULT_GRAPH_NODES = 100_000
LOAD_HEADERS = ["graph", "into", "method", "rows", "time (s)", "rows/s", "vs COPY (×)",
                "Spark read / JDBC write / move (s)", "triangles after"]
CREATE_HEADERS = ["graph", "preprocess", "create (s)", "Spark compute / write / copy (s)", "|D|", "triangles"]
SESSION_HEADERS = ["Spark session", "time (s)"]
EMPTY_TABLE = "empty table"
NO_VIEW = "R, no view"
UNDER_VIEW = f"R under ivme ε={EPSILON:g}"
COPY = "psycopg COPY"
PGIVM_LOAD = "pgivm load"


@dataclass
class Graph:
    label: str
    path: Path


@dataclass
class Config:
    graphs: list[Graph]
    dsn: str  # conninfo of the scratch database: pgivm load opens its own connections
    master: str = "local[*]"


@dataclass
class LoadRun:
    graph: str
    into: str
    method: str
    rows: int
    seconds: float
    steps: dict[str, float] = field(default_factory=dict)
    count: int | None = None  # the view's count after the load


@dataclass
class CreateRun:
    graph: str
    preprocess: str
    seconds: float
    count: int
    db_size: int
    steps: dict[str, float] = field(default_factory=dict)


@dataclass
class Results:
    startup: float | None = None  # None: the session was already running
    warm_up: float = 0.0
    loads: list[LoadRun] = field(default_factory=list)
    creates: list[CreateRun] = field(default_factory=list)


def generated_graph(directory: Path, nodes: int, edges: int, seed: int) -> Graph:
    """A power-law graph written as a SNAP edge list (a comment line, then ``u<TAB>v``)."""
    drawn = graphs.power_law_graph(nodes, edges, seed=seed)
    path = directory / f"power_law_{nodes}_{edges}.txt"
    with open(path, "w", encoding="utf-8") as out:
        out.write(f"# generated power-law graph: {nodes} nodes, {len(drawn)} undirected edges, seed {seed}\n")
        out.writelines(f"{u}\t{v}\n" for u, v in drawn)
    return Graph(f"power-law, {nodes:,} nodes, {len(drawn):,} edges", path)


@contextmanager
def generated(nodes: int, edges: int, seed: int) -> Iterator[Graph]:
    with tempfile.TemporaryDirectory(prefix="pgivm-bench-load-") as directory:
        yield generated_graph(Path(directory), nodes, edges, seed)


def _say(text: str) -> None:
    print(f"  load: {text}", file=sys.stderr, flush=True)


def _both_directions(path: Path) -> list[tuple[int, int]]:
    edges = graphs.read_edge_list(path)
    return edges + [(v, u) for u, v in edges]


def _create_table(conn: psycopg.Connection, table: str, x: str, y: str) -> None:
    conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))
    conn.execute(sql.SQL("CREATE TABLE {} ({} int NOT NULL, {} int NOT NULL)").format(
        sql.Identifier(table), sql.Identifier(x), sql.Identifier(y)))


def copy_file(conn: psycopg.Connection, table: str, columns: tuple[str, str], path: Path) -> tuple[int, float]:
    """The psycopg way: read the file in Python, one COPY of both directions; (rows, seconds)."""
    started = time.perf_counter()
    data = copy_text(_both_directions(path))
    with conn.transaction():
        with conn.cursor().copy(sql.SQL("COPY {} ({}, {}) FROM STDIN").format(
                sql.Identifier(table), sql.Identifier(columns[0]), sql.Identifier(columns[1]))) as copy:
            copy.write(data)
    return data.count(b"\n"), time.perf_counter() - started


def pgivm_load(config: Config, table: str, columns: tuple[str, str], path: Path) -> tuple[int, float, dict[str, float]]:
    """``pgivm load TABLE FILE --format edges --symmetric --drop-self-loops --distinct``."""
    from pgivm.spark import load as spark_load

    result = spark_load.load(f"{BENCH_SCHEMA}.{table}", str(path), list(columns), fmt="edges", master=config.master,
                             symmetric=True, drop_self_loops=True, distinct=True, target=config.dsn)
    return result.rows, result.seconds, dict(result.steps)


def _rows(conn: psycopg.Connection, table: str) -> int:
    row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))).fetchone()
    return int(row[0]) if row else 0


def _same_rows(conn: psycopg.Connection, first: str, second: str) -> bool:
    row = conn.execute(sql.SQL(
        "SELECT (SELECT count(*) FROM (SELECT * FROM {a} EXCEPT ALL SELECT * FROM {b}) x) "
        "     + (SELECT count(*) FROM (SELECT * FROM {b} EXCEPT ALL SELECT * FROM {a}) y)"
    ).format(a=sql.Identifier(first), b=sql.Identifier(second))).fetchone()
    return bool(row) and row[0] == 0


def _maintained(conn: psycopg.Connection) -> int:
    row = conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(VIEW))).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def start_session(config: Config, conn: psycopg.Connection, results: Results) -> None:
    """Start Spark (timed on its own), then warm it up untimed-in-the-tables: a tiny pgivm load and
    a tiny ``--preprocess spark`` build, over tables dropped again afterwards."""
    from pgivm.spark import session

    running = session._session is not None
    started = time.perf_counter()
    _say(f"starting Spark ({config.master}) ...")
    session.get_spark(config.master)
    results.startup = None if running else time.perf_counter() - started
    started = time.perf_counter()
    _say("warming up Spark: a tiny load and a tiny build ...")
    tiny = [(i, (i * 7 + 1) % 50) for i in range(200) if i != (i * 7 + 1) % 50]
    load_tables(conn, base_rows(tiny, set()))
    with tempfile.TemporaryDirectory(prefix="pgivm-bench-warm-") as directory:
        path = Path(directory) / "warm.txt"
        path.write_text("".join(f"{u} {v}\n" for u, v in tiny))
        _create_table(conn, "warm_up", "src", "dst")
        pgivm_load(config, "warm_up", ("src", "dst"), path)
    command.create(VIEW, TRIANGLE_SQL, epsilon=EPSILON, target=conn, preprocess="spark")
    command.drop(VIEW, target=conn)
    conn.execute("DROP TABLE warm_up, r, s, t")
    results.warm_up = time.perf_counter() - started


def load_into_empty_table(config: Config, conn: psycopg.Connection, graph: Graph, results: Results) -> None:
    for table in ("load_copy", "load_spark"):
        _create_table(conn, table, "src", "dst")
    settle(conn)
    _say(f"{graph.label}: psycopg COPY into an empty table ...")
    rows, seconds = copy_file(conn, "load_copy", ("src", "dst"), graph.path)
    results.loads.append(LoadRun(graph.label, EMPTY_TABLE, COPY, rows, seconds))
    settle(conn)
    _say(f"{graph.label}: pgivm load into an empty table ...")
    rows, seconds, steps = pgivm_load(config, "load_spark", ("src", "dst"), graph.path)
    results.loads.append(LoadRun(graph.label, EMPTY_TABLE, PGIVM_LOAD, rows, seconds, steps))
    if not _same_rows(conn, "load_copy", "load_spark"):
        raise PgivmError(f"{graph.label}: pgivm load and COPY loaded different rows "
                         f"({_rows(conn, 'load_spark'):,} and {_rows(conn, 'load_copy'):,})")
    conn.execute("DROP TABLE load_copy, load_spark")


def create_both_ways(conn: psycopg.Connection, graph: Graph, results: Results) -> int:
    """R, S, T hold the graph; the view built in PostgreSQL, then with Spark; returns the agreed count."""
    _say(f"{graph.label}: loading R, S, T ...")
    load_tables(conn, base_rows(graphs.read_edge_list(graph.path), set()))
    from pgivm.spark import preprocess as spark_preprocess

    runs = []
    for preprocess in ("postgres", "spark"):
        _say(f"{graph.label}: create ε={EPSILON:g}, preprocess {preprocess} ...")
        created = command.create(VIEW, TRIANGLE_SQL, epsilon=EPSILON, target=conn, preprocess=preprocess)
        steps = dict(spark_preprocess.last_timings) if preprocess == "spark" else {}
        runs.append(CreateRun(graph.label, preprocess, created.seconds, int(created.count or 0),
                              int(created.figures.get("db_size") or 0), steps))
        command.drop(VIEW, target=conn)
        settle(conn)
    results.creates.extend(runs)
    if runs[0].count != runs[1].count or runs[0].db_size != runs[1].db_size:
        raise PgivmError(f"{graph.label}: the PostgreSQL build counts {runs[0].count:,} (|D| = {runs[0].db_size:,}), "
                         f"the Spark build {runs[1].count:,} (|D| = {runs[1].db_size:,})")
    return runs[0].count


def load_under_view(config: Config, conn: psycopg.Connection, graph: Graph, truth: int, results: Results) -> None:
    """Empty R (S and T keep the graph), then each method with no view and under the view."""
    for into in (NO_VIEW, UNDER_VIEW):
        for method in (COPY, PGIVM_LOAD):
            conn.execute("TRUNCATE r")
            conn.execute("VACUUM ANALYZE r")
            if into == UNDER_VIEW:
                _say(f"{graph.label}: creating the view over the empty R ...")
                command.create(VIEW, TRIANGLE_SQL, epsilon=EPSILON, target=conn)
                conn.execute("VACUUM ANALYZE")
            settle(conn)
            _say(f"{graph.label}: {method} into {into} ...")
            steps: dict[str, float] = {}
            if method == COPY:
                rows, seconds = copy_file(conn, "r", ("a", "b"), graph.path)
            else:
                rows, seconds, steps = pgivm_load(config, "r", ("a", "b"), graph.path)
            run = LoadRun(graph.label, into, method, rows, seconds, steps)
            if _rows(conn, "r") != rows:
                raise PgivmError(f"{graph.label}: {method} into {into} reported {rows:,} rows, R holds {_rows(conn, 'r'):,}")
            if into == UNDER_VIEW:
                run.count = _maintained(conn)
                if run.count != truth:
                    raise PgivmError(f"{graph.label}: after {method} into R the view counts {run.count:,}, "
                                     f"the builds counted {truth:,}")
                command.drop(VIEW, target=conn)
            results.loads.append(run)


def run(conn: psycopg.Connection, config: Config) -> Results:
    results = Results()
    start_session(config, conn, results)
    for graph in config.graphs:
        load_into_empty_table(config, conn, graph, results)
        truth = create_both_ways(conn, graph, results)
        load_under_view(config, conn, graph, truth, results)
        conn.execute("DROP TABLE r, s, t")
    return results


def _steps(steps: dict[str, float], keys: tuple[str, ...]) -> str:
    return " / ".join(f"{steps[k]:.1f}" for k in keys) if steps and all(k in steps for k in keys) else ""


def print_tables(results: Results) -> None:
    print(f"\nSpark session (reported apart: every Spark time below is with this session warm):")
    report.print_table(SESSION_HEADERS, [
        ["start-up (JVM, JDBC driver)", "already running" if results.startup is None else f"{results.startup:.1f}"],
        ["warm-up (a tiny load and a tiny build)", f"{results.warm_up:.1f}"],
    ])
    copy_time = {(r.graph, r.into): r.seconds for r in results.loads if r.method == COPY}
    print("\nloads (time from reading the file to the commit; both directions of every edge):")
    report.print_table(LOAD_HEADERS, [
        [r.graph, r.into, r.method, f"{r.rows:,}", f"{r.seconds:.3f}", f"{r.rows / r.seconds:,.0f}",
         f"{r.seconds / copy_time[(r.graph, r.into)]:.2f}" if (r.graph, r.into) in copy_time else "",
         _steps(r.steps, ("read", "write", "move")), "" if r.count is None else f"{r.count:,}"]
        for r in results.loads
    ])
    print(f"\ncreate of the triangle view at ε={EPSILON:g} (R, S, T each hold the graph in both directions):")
    report.print_table(CREATE_HEADERS, [
        [c.graph, c.preprocess, f"{c.seconds:.1f}", _steps(c.steps, ("compute", "write", "copy")),
         f"{c.db_size:,}", f"{c.count:,}"]
        for c in results.creates
    ])
    graphs_seen = list(dict.fromkeys(c.graph for c in results.creates))
    print("\nloading under a view (pgivm load) against dropping the view, loading and creating it again:")
    for graph in graphs_seen:
        build = next(c.seconds for c in results.creates if c.graph == graph and c.preprocess == "postgres")
        maintained = next((r for r in results.loads if r.graph == graph and r.into == UNDER_VIEW
                           and r.method == PGIVM_LOAD), None)
        bare = next((r for r in results.loads if r.graph == graph and r.into == NO_VIEW
                     and r.method == PGIVM_LOAD), None)
        if maintained and bare:
            print(f"{graph}: pgivm load into R under the view {maintained.seconds:.1f} s; "
                  f"instead dropping the view, loading ({bare.seconds:.1f} s) and creating it again "
                  f"({build:.1f} s): {bare.seconds + build:.1f} s")


def main(conn: psycopg.Connection, config: Config) -> Results:
    print(f"\n== load: {'; '.join(g.label for g in config.graphs)}; Spark master {config.master}")
    sys.stdout.flush()
    results = run(conn, config)
    print_tables(results)
    print()
    return results

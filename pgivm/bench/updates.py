"""Workload: single-row updates on a real or generated graph, one row per statement, autocommit.

R, S and T each hold every edge of the graph in both directions except K held-out edges; the
stream inserts the K edges, then deletes them again, spreading the rows over R, S and T. The
same stream runs with no view and with each strategy, in one run on one server.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass

import psycopg
from psycopg import sql

from pgivm import command, report
from pgivm.progress import Progress

TRIANGLE_SQL = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a"
TABLES = {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}


@dataclass
class StreamResult:
    label: str
    updates: int
    seconds: float
    latencies: list[float]
    build_seconds: float | None = None
    state_bytes: int | None = None

    @property
    def per_second(self) -> float:
        return self.updates / self.seconds

    @property
    def median_ms(self) -> float:
        return 1000 * statistics.median(self.latencies)

    @property
    def p99_ms(self) -> float:
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def load(conn: psycopg.Connection, edges: list[tuple[int, int]], held: set[tuple[int, int]]) -> None:
    for table, (x, y) in TABLES.items():
        ident = sql.Identifier(table)
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(ident))
        conn.execute(sql.SQL("CREATE TABLE {} ({} int NOT NULL, {} int NOT NULL)").format(
            ident, sql.Identifier(x), sql.Identifier(y)))
        with conn.cursor().copy(sql.SQL("COPY {} FROM STDIN").format(ident)) as copy:
            for u, v in edges:
                if (u, v) not in held:
                    copy.write_row((u, v))
                    copy.write_row((v, u))
        # The stream's own DELETEs find their row through this index, with and without a view.
        conn.execute(sql.SQL("CREATE INDEX ON {} ({}, {})").format(ident, sql.Identifier(x), sql.Identifier(y)))
    conn.execute("VACUUM ANALYZE r, s, t")


def stream(conn: psycopg.Connection, held: list[tuple[int, int]], label: str) -> StreamResult:
    latencies = []
    with Progress(f"{label}: single-row updates", total=2 * len(held)) as progress:
        for phase in ("INSERT", "DELETE"):
            for i, (u, v) in enumerate(held):
                table = "rst"[i % 3]
                x, y = TABLES[table]
                if phase == "INSERT":
                    statement = sql.SQL("INSERT INTO {} VALUES (%s, %s)").format(sql.Identifier(table))
                else:
                    statement = sql.SQL("DELETE FROM {} WHERE {} = %s AND {} = %s").format(
                        sql.Identifier(table), sql.Identifier(x), sql.Identifier(y))
                started = time.perf_counter()
                conn.execute(statement, (u, v))
                latencies.append(time.perf_counter() - started)
                progress.advance()
        seconds = progress.elapsed
    return StreamResult(label, len(latencies), seconds, latencies)


def run(conn: psycopg.Connection, edges: list[tuple[int, int]], held_out: int, epsilons: list[float],
        seed: int = 1) -> list[StreamResult]:
    """The same insert-then-delete stream with no view, then under an IVMε view for each ε."""
    rnd = random.Random(seed)
    held = rnd.sample(edges, min(held_out, len(edges)))
    load(conn, edges, set(held))
    results = [stream(conn, held, "no view")]
    for epsilon in epsilons:
        name = "bench_tri"
        created = command.create(name, TRIANGLE_SQL, epsilon=epsilon, target=conn)
        result = stream(conn, held, f"ivme eps={epsilon:g}")
        result.build_seconds = created.seconds
        result.state_bytes = sum(t["bytes"] for t in command.status(name, target=conn)["tables"])
        report = command.verify(name, target=conn)
        if not report.ok:
            raise AssertionError(f"{name} drifted: {report.maintained} vs {report.recount}: {report.failures}")
        command.drop(name, target=conn)
        results.append(result)
    return results


def print_table(results: list[StreamResult]) -> None:
    base = results[0].per_second
    report.print_table(
        ["strategy", "updates/s", "vs no view", "median ms", "p99 ms", "build s", "state MB"],
        [
            [r.label, f"{r.per_second:,.0f}", f"{r.per_second / base:.2f}", f"{r.median_ms:.3f}", f"{r.p99_ms:.3f}",
             "" if r.build_seconds is None else f"{r.build_seconds:.1f}",
             "" if r.state_bytes is None else f"{r.state_bytes / 2**20:.1f}"]
            for r in results
        ],
    )

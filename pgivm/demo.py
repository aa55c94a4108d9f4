"""``pgivm demo``: a live triangle count on a generated skewed graph, checked against a recount.

Runs on the database pgivm resolves (the embedded server by default) inside its own schema
``ivme_demo``: a power-law graph is loaded into R, S and T (each edge in both directions),
an IVMε view counts the triangle joins, then a stream of single-row inserts and deletes runs
while the view stays exact. The demo ends with a recount in plain SQL and the invariant checks.
"""

from __future__ import annotations

import os
import random
import sys
import time

import psycopg
from psycopg import sql

from pgivm import command
from pgivm.bench.graphs import power_law_graph
from pgivm.catalog import migrate
from pgivm.catalog import views as catalog
from pgivm.connection import LIBPQ_ENV_VARS, connect, describe_target
from pgivm.errors import PgivmError
from pgivm.progress import Progress

# Not pgivm_...: pgivm reserves those schemas for itself, and the view lives here too.
SCHEMA = "ivme_demo"
VIEW = "demo_triangles"
# The schema's comment: only a schema carrying it is dropped and recreated by the next demo.
SCHEMA_COMMENT = "pgivm demo data: dropped and recreated by every pgivm demo"
RELATIONS = {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}


def _configured() -> bool:
    """Whether a database other than the embedded server was configured in the environment."""
    return bool(os.environ.get("PGIVM_DSN")) or any(os.environ.get(v) for v in LIBPQ_ENV_VARS)


def _check_schema(conn: psycopg.Connection) -> None:
    """Refuse to replace a schema of that name that an earlier demo did not make."""
    existing = conn.execute("SELECT pg_catalog.obj_description(oid, 'pg_namespace') FROM pg_catalog.pg_namespace "
                            "WHERE nspname = %s", [SCHEMA]).fetchone()
    if existing is not None and existing[0] != SCHEMA_COMMENT:
        raise PgivmError(f"schema {SCHEMA} exists and is not the demo's own, so the demo will not replace it",
                         "drop or rename it, or run the demo on another database (--dsn)")


def _setup(conn: psycopg.Connection, edges: list[tuple[int, int]]) -> None:
    if catalog.exists(conn, VIEW):
        command.drop(VIEW, target=conn)
    conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s}").format(s=sql.Identifier(SCHEMA)))
    conn.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(sql.Identifier(SCHEMA), sql.Literal(SCHEMA_COMMENT)))
    for table, (x, y) in RELATIONS.items():
        ident = sql.Identifier(SCHEMA, table)
        conn.execute(sql.SQL("CREATE TABLE {} ({} int NOT NULL, {} int NOT NULL)").format(
            ident, sql.Identifier(x), sql.Identifier(y)))
        with conn.cursor().copy(sql.SQL("COPY {} FROM STDIN").format(ident)) as copy:
            for u, v in edges:  # each undirected edge in both directions
                copy.write_row((u, v))
                copy.write_row((v, u))
        # Lets the demo's own DELETEs find a row without scanning; pgivm itself needs no index here.
        conn.execute(sql.SQL("CREATE INDEX ON {} ({}, {})").format(ident, sql.Identifier(x), sql.Identifier(y)))


def run(
    *, target: str | None = None, nodes: int = 2000, edges: int = 20000, updates: int = 3000,
    epsilon: float = 0.5, seed: int = 7, port: int | None = None, out=None,
) -> int:
    """A live triangle count on a generated skewed graph, checked against a recount.

    ``port``: run on the embedded server at this TCP port (started there if it is not running).
    Prints to ``out`` (default stdout); returns the exit code: 0, or 1 if the view and the recount
    differ."""
    out = out or sys.stdout
    embedded = target is None and not _configured()
    if port is not None:
        if not embedded:
            raise PgivmError("--port is the embedded server's, and a database is given (--dsn, PGIVM_DSN or PG*)",
                             "drop --port, or the database setting, to run the demo on the embedded server")
        target = _embedded_on(port)
    rnd = random.Random(seed)
    print(f"pgivm demo on {describe_target(target)}", file=out)
    graph = power_law_graph(nodes, edges, seed=seed)
    with connect(target, autocommit=True) as conn:
        _check_schema(conn)
        migrate.upgrade(conn)
        print(f"loading a skewed graph: {nodes:,} nodes, {len(graph):,} edges, into "
              f"{SCHEMA}.r, .s, .t (both directions: {2 * len(graph):,} rows each)", file=out)
        _setup(conn, graph)
        definition = (f"SELECT count(*) FROM {SCHEMA}.r JOIN {SCHEMA}.s ON r.b = s.b "
                      f"JOIN {SCHEMA}.t ON s.c = t.c AND t.a = r.a")
        created = command.create(VIEW, definition, epsilon=epsilon, schema=SCHEMA, target=conn)
        print(f"created {created.view} with epsilon = {epsilon}: count = {created.count:,} "
              f"(state built in {created.seconds:.2f} s)", file=out)

        present = {k: [(u, v) for u, v in graph] + [(v, u) for u, v in graph] for k in RELATIONS}
        weights = [1.0 / (rank + 1) for rank in range(nodes)]
        with Progress("single-row updates", total=updates) as progress:
            for i in range(updates):
                table = rnd.choice(list(RELATIONS))
                x, y = RELATIONS[table]
                ident = sql.Identifier(SCHEMA, table)
                if i % 2 == 0:  # insert an edge between a hub-biased node and a random one
                    row = (rnd.choices(range(nodes), weights)[0], rnd.randrange(nodes))
                    conn.execute(sql.SQL("INSERT INTO {} VALUES (%s, %s)").format(ident), row)
                    present[table].append(row)
                else:  # delete one existing row
                    rows = present[table]
                    row = rows.pop(rnd.randrange(len(rows)))
                    conn.execute(sql.SQL("DELETE FROM {t} WHERE ctid = (SELECT ctid FROM {t} WHERE {x} = %s AND {y} = %s LIMIT 1)")
                                 .format(t=ident, x=sql.Identifier(x), y=sql.Identifier(y)), row)
                if i % 200 == 0 or i == updates - 1:
                    count = conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(SCHEMA, VIEW))).fetchone()[0]
                    progress.advance(1, note=f"count = {count:,}")
                else:
                    progress.advance(1)
        elapsed = progress.elapsed

        maintained = conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(SCHEMA, VIEW))).fetchone()[0]
        started = time.perf_counter()
        recount = conn.execute(definition).fetchone()[0]  # type: ignore[call-overload]
        recount_seconds = time.perf_counter() - started
        report = command.verify(VIEW, target=conn)
        state = command.status(VIEW, target=conn)

    rows = [
        ("final count (maintained)", f"{maintained:,}"),
        ("recount (plain SQL)", f"{recount:,}  ({recount_seconds:.2f} s)"),
        ("exact", "yes" if maintained == recount else "NO"),
        ("IVMε invariants", "all hold" if not report.failures else f"{len(report.failures)} violated"),
        ("updates applied", f"{updates:,}"),
        ("updates/s", f"{updates / elapsed:,.0f}  ({1000 * elapsed / updates:.2f} ms per update)"),
        ("rebalancings (major/minor)", f"{state.figures['major_rebalances']}/{state.figures['minor_rebalances']}"),
    ]
    width = max(len(k) for k, _ in rows)
    print(file=out)
    for key, value in rows:
        print(f"{key.ljust(width)}  {value}", file=out)
    for failure in report.failures:
        print(f"invariant violated: {failure}", file=out)
    if embedded:  # the embedded server, which outlives the demo
        print(f'\nquery it yourself: pgivm psql -c "SELECT * FROM {SCHEMA}.{VIEW}"', file=out)
        print("the embedded PostgreSQL server is still running, for later pgivm commands; "
              "`pgivm server stop` stops it", file=out)
    else:
        print(f"\nquery it yourself: SELECT * FROM {SCHEMA}.{VIEW}  (on {describe_target(target)})", file=out)
    return 0 if report.ok else 1


def _embedded_on(port: int) -> str:
    """The embedded server's DSN, the server started on ``port`` if it is not running; one line if
    it runs on another port."""
    from pgivm.server import EmbeddedServer  # imported late: only needed here

    server = EmbeddedServer(port=port)
    status = server.status()
    if status.running and status.port != port:
        raise PgivmError(f"the embedded server already runs on port {status.port}, not {port}",
                         f"run `pgivm server start --port {port} --restart` first, or drop --port")
    server.start()
    return server.dsn()

"""Real graphs with published triangle counts (SNAP): ego-Facebook and ca-GrQc.

ego-Facebook is loaded into R, S and T with every edge in both directions, so the 3-relation
query counts each of its 1,612,010 triangles 6 times. ca-GrQc goes through the edge-table
self-join form, self-loops and duplicate pairs dropped: 6 x 48,260. A random stream of deletes
and re-inserts runs through the triggers, then the count and every invariant are checked.
ca-GrQc ships with the tests; ego-Facebook is optional (see conftest.optional_graph).
"""

from __future__ import annotations

import random
from pathlib import Path

import psycopg
import pytest

from conftest import EDGE_SQL, GRQC, TRIANGLE_SQL, open_text
from pgivm import command

FACEBOOK_JOIN_COUNT = 6 * 1_612_010  # 9,672,060
GRQC_JOIN_COUNT = 6 * 48_260  # 289,560

pytestmark = pytest.mark.slow


def read_undirected(path: Path) -> list[tuple[int, int]]:
    """Distinct undirected edges (u < v) of a SNAP edge list, plain or gzipped; comments, headers,
    self-loops dropped."""
    edges: set[tuple[int, int]] = set()
    with open_text(path) as handle:
        for line in handle:
            fields = line.split()
            if len(fields) < 2 or line.startswith("#"):
                continue  # a comment or the node-count header
            u, v = int(fields[0]), int(fields[1])
            if u != v:
                edges.add((min(u, v), max(u, v)))
    return sorted(edges)


def copy_both_directions(conn: psycopg.Connection, table: str, edges: list[tuple[int, int]]) -> None:
    with conn.cursor().copy(f"COPY {table} FROM STDIN") as copy:
        for u, v in edges:
            copy.write_row((u, v))
            copy.write_row((v, u))


def churn(conn: psycopg.Connection, tables: dict[str, tuple[str, str]], edges: list[tuple[int, int]],
          count: int, seed: int) -> None:
    """Delete ``count`` random directed edges one row per statement, then re-insert them in another order."""
    rnd = random.Random(seed)
    removed = []
    for u, v in rnd.sample(edges, count):
        table = rnd.choice(list(tables))
        x, y = tables[table]
        row = (u, v) if rnd.random() < 0.5 else (v, u)
        conn.execute(f"DELETE FROM {table} WHERE {x} = %s AND {y} = %s", row)
        removed.append((table, row))
    rnd.shuffle(removed)
    for table, row in removed:
        x, y = tables[table]
        conn.execute(f"INSERT INTO {table} ({x}, {y}) VALUES (%s, %s)", row)


@pytest.mark.parametrize("epsilon", [0.5])
def test_facebook_rst_stays_exact_under_churn(facebook: Path, conn: psycopg.Connection, epsilon: float) -> None:
    edges = read_undirected(facebook)
    assert len(edges) == 88_234
    tables = {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}
    for table, (x, y) in tables.items():
        conn.execute(f"CREATE TABLE {table} ({x} int NOT NULL, {y} int NOT NULL)")
        copy_both_directions(conn, table, edges)
        conn.execute(f"CREATE INDEX ON {table} ({x}, {y})")  # for the test's own DELETEs

    created = command.create("tri", TRIANGLE_SQL, epsilon=epsilon, target=conn)
    assert created.count == FACEBOOK_JOIN_COUNT
    churn(conn, tables, edges, count=1500, seed=11)
    assert conn.execute("SELECT * FROM tri").fetchone()[0] == FACEBOOK_JOIN_COUNT

    report = command.verify("tri", target=conn)
    assert report.recount == FACEBOOK_JOIN_COUNT
    assert report.ok, [str(f) for f in report.failures]


def test_grqc_edge_form_stays_exact_under_churn(conn: psycopg.Connection) -> None:
    edges = read_undirected(GRQC)
    assert len(edges) == 14_484
    conn.execute("CREATE TABLE e (src int NOT NULL, dst int NOT NULL)")
    copy_both_directions(conn, "e", edges)
    conn.execute("CREATE INDEX ON e (src, dst)")

    created = command.create("grqc", EDGE_SQL, epsilon=0.5, target=conn)
    assert created.count == GRQC_JOIN_COUNT
    churn(conn, {"e": ("src", "dst")}, edges, count=1500, seed=5)
    assert conn.execute("SELECT * FROM grqc").fetchone()[0] == GRQC_JOIN_COUNT

    report = command.verify("grqc", target=conn)
    assert report.recount == GRQC_JOIN_COUNT
    assert report.ok, [str(f) for f in report.failures]

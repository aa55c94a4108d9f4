"""Real graphs with published triangle counts (SNAP): ego-Facebook and ca-GrQc.

ego-Facebook is loaded into R, S and T with every edge in both directions, so the 3-relation
query counts each of its 1,612,010 triangles 6 times. ca-GrQc goes through the edge-table
self-join form, self-loops and duplicate pairs dropped: 6 x 48,260. A random stream of deletes
and re-inserts runs through the triggers. The end of the stream restores the starting data, so the
count and the invariants are also checked in the middle, where the data differs from the start
(and the test asserts that the count there does differ): after all the deletes and half-way through
the re-inserts, against a plain-SQL recount, with ``verify`` (every invariant) where it is cheap
enough. ca-GrQc ships with the tests; ego-Facebook is optional (see conftest.optional_graph) and
opt-in (``-m slow``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from conftest import EDGE_SQL, GRQC, TRIANGLE_SQL, open_text
from pgivm import command

FACEBOOK_JOIN_COUNT = 6 * 1_612_010  # 9,672,060
GRQC_JOIN_COUNT = 6 * 48_260  # 289,560


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
          count: int, seed: int, checkpoint: Callable[[str], None]) -> None:
    """Delete ``count`` random directed edges one row per statement, then re-insert them in another
    order. ``checkpoint`` runs where the data differs from the start: after the last delete, and
    half-way through the re-inserts."""
    rnd = random.Random(seed)
    removed = []
    for u, v in rnd.sample(edges, count):
        table = rnd.choice(list(tables))
        x, y = tables[table]
        row = (u, v) if rnd.random() < 0.5 else (v, u)
        conn.execute(f"DELETE FROM {table} WHERE {x} = %s AND {y} = %s", row)
        removed.append((table, row))
    checkpoint("after all deletes")
    rnd.shuffle(removed)
    for i, (table, row) in enumerate(removed):
        if i == len(removed) // 2:
            checkpoint("half-way through the re-inserts")
        x, y = tables[table]
        conn.execute(f"INSERT INTO {table} ({x}, {y}) VALUES (%s, %s)", row)


class Checkpoints:
    """Mid-churn checks of view ``name``: the maintained count against a plain-SQL recount of
    ``recount_sql``, which must differ from ``start`` (else the check proves nothing), and
    ``command.verify`` (its own recount and every invariant) at the stages named in ``verify_at``."""

    def __init__(self, conn: psycopg.Connection, name: str, recount_sql: str, start: int, verify_at: set[str]) -> None:
        self.conn, self.name, self.recount_sql, self.start, self.verify_at = conn, name, recount_sql, start, verify_at
        self.counts: dict[str, int] = {}

    def __call__(self, stage: str) -> None:
        maintained = self.conn.execute(f"SELECT * FROM {self.name}").fetchone()[0]
        recount = self.conn.execute(self.recount_sql).fetchone()[0]
        assert maintained == recount, f"{stage}: maintained {maintained} != recount {recount}"
        assert recount != self.start, f"{stage}: the count equals the starting count, the check is vacuous"
        if stage in self.verify_at:
            report = command.verify(self.name, target=self.conn)
            assert report.recount == recount, f"{stage}: verify recounts {report.recount}, plain SQL {recount}"
            assert report.ok, f"{stage}: {[str(f) for f in report.failures]}"
        self.counts[stage] = recount

    def assert_ran(self) -> None:
        """Both checkpoints ran; re-inserting rows only adds to the count."""
        deleted, half = self.counts["after all deletes"], self.counts["half-way through the re-inserts"]
        assert deleted <= half <= self.start and deleted < self.start and half < self.start, self.counts


@pytest.mark.slow  # ego-Facebook: from outside the repository, minutes (opt in: -m slow)
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
    # A recount of ego-Facebook takes a few seconds, a verify about ten: verify once, mid-churn.
    checkpoints = Checkpoints(conn, "tri", TRIANGLE_SQL, FACEBOOK_JOIN_COUNT, verify_at={"after all deletes"})
    churn(conn, tables, edges, count=1500, seed=11, checkpoint=checkpoints)
    checkpoints.assert_ran()
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
    checkpoints = Checkpoints(conn, "grqc", EDGE_SQL, GRQC_JOIN_COUNT,
                              verify_at={"after all deletes", "half-way through the re-inserts"})
    churn(conn, {"e": ("src", "dst")}, edges, count=1500, seed=5, checkpoint=checkpoints)
    checkpoints.assert_ran()
    assert conn.execute("SELECT * FROM grqc").fetchone()[0] == GRQC_JOIN_COUNT

    report = command.verify("grqc", target=conn)
    assert report.recount == GRQC_JOIN_COUNT
    assert report.ok, [str(f) for f in report.failures]

"""SELECT items that compute (issue 22): arithmetic and functions over GROUP BY columns and
aggregates (``sum(r.a) / count(*)``, ``coalesce(max(r.a), 0)``, ``s.c * 10 + 1``, ``CASE``), and
over a listing's columns, with HAVING and DISTINCT applied in SQL's order (HAVING on the groups,
then the expressions, then DISTINCT): each column and aggregate is maintained, the view computes
the items as it reads them; under fivm, first-order and recompute after every statement against
PostgreSQL, with the column names PostgreSQL gives.
"""

from __future__ import annotations

import random

import psycopg
import pytest

from pgivm import command

QUERIES = {
    "grouped": ("SELECT s.c * 10 + 1 AS key, sum(r.a) / count(*) AS mean, coalesce(sum(r.a), -1), "
                "CASE WHEN count(*) > 2 THEN 'many' ELSE 'few' END AS size FROM r JOIN s ON r.b = s.b GROUP BY s.c "
                "HAVING count(*) > 1"),
    "listing": "SELECT DISTINCT r.a * s.c AS p, lower(s.c::text) FROM r JOIN s ON r.b = s.b WHERE r.a IS NOT NULL",
    "one group": "SELECT count(*) * 2 AS twice, sum(r.a) - 1 FROM r JOIN s ON r.b = s.b",
    # constants beside columns and aggregates: the same value in every row (pg_ivm's suite has SELECT 1)
    "constants": "SELECT 'x' AS tag, s.c, count(*), 2 * 3 AS six, NULL::int AS nothing FROM r JOIN s ON r.b = s.b GROUP BY s.c",
}


def _write(conn: psycopg.Connection, rng: random.Random) -> None:
    table = rng.choice(["r", "s"])
    if rng.random() < 0.8:
        conn.execute(f"INSERT INTO {table} VALUES (%s, %s)",
                     [rng.choice([None, 1, 2, 3, 4]) if table == "r" else rng.randint(0, 3), rng.randint(0, 3)])
    else:
        conn.execute(f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} ORDER BY random() LIMIT 2)")


@pytest.mark.parametrize("label", list(QUERIES))
def test_computed_items_after_every_statement(conn: psycopg.Connection, dsn: str, label: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    conn.execute("SELECT setseed(0.25)")  # ORDER BY random() in the writes: the same stream each run
    rng = random.Random(label)
    for _ in range(10):
        _write(conn, rng)
    query = QUERIES[label]
    systems = ("fivm", "first_order", "recompute")
    for system in systems:
        command.create(f"v_{system}", query, system=system.replace("_", "-"), target=dsn)
    names = [d.name for d in conn.execute(f"{query} LIMIT 0").description]
    seen = set()
    for step in range(40):
        _write(conn, rng)
        expected = sorted(conn.execute(query).fetchall(), key=repr)
        seen.add(repr(expected))
        for system in systems:
            cur = conn.execute(f"SELECT * FROM v_{system}")
            assert [d.name for d in cur.description] == names
            assert sorted(cur.fetchall(), key=repr) == expected, (system, step)
    assert len(seen) > 3
    for system in systems:
        assert command.verify(f"v_{system}", target=dsn).ok

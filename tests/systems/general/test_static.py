"""Relations of constant rows (issue 22): generate_series of constants and VALUES lists in FROM,
and a SELECT without FROM, kept as tables of the view's state schema filled at create, each view
compared with PostgreSQL's own evaluation of its SQL after every statement on the base table
(inserts with duplicates and NULLs, deletes, deletes of absent rows, UPDATEs of the join
column, TRUNCATE, rolled-back transactions), under the default system and recompute.
"""

from __future__ import annotations

import random

import psycopg
import pytest

from pgivm import command
from pgivm.errors import PgivmError

QUERIES = {  # label -> (query, the default system)
    "cross product": ("SELECT a.i, a.j FROM a, generate_series(1, 3)", "first-order"),
    "joined series": ("SELECT a.i, g.x FROM a JOIN generate_series(0, 4, 2) AS g(x) ON a.i = g.x", "fivm"),
    "series aggregate": ("SELECT g.x, count(*) AS n, sum(a.j) AS s FROM generate_series(1, 5) AS g(x) "
                         "JOIN a ON a.i = g.x GROUP BY g.x", "fivm"),
    "left join values": ("SELECT a.i, v.name FROM a LEFT JOIN (VALUES (1, 'one'), (2, 'two'), (2, 'deux')) AS v(x, name) "
                         "ON a.i = v.x", "first-order"),
    "values on the left": ("SELECT v.x, count(a.j) AS n FROM (VALUES (0), (1), (5)) AS v(x) LEFT JOIN a ON a.i = v.x "
                           "GROUP BY v.x", "first-order"),
    # timestamps: a series of dates is one of timestamptz, whose EXTRACT reads the session's TimeZone (refused)
    "dates": ("SELECT d, count(*) AS n FROM generate_series(TIMESTAMP '2026-01-01', TIMESTAMP '2026-01-05', INTERVAL '1 day') AS d "
              "JOIN a ON a.i = EXTRACT(day FROM d) GROUP BY d", "first-order"),
    "constants over a table": ("SELECT 1 AS one, 'x' AS tag FROM a", "recompute"),
    "no FROM": ("SELECT 1 AS one, 'two' AS two", "recompute"),
    # a WITH query or a subquery without FROM (refused before): the one row it reads is a table of the state
    "no FROM in a with query": ("WITH c AS (SELECT 1 AS one, 2 AS two) SELECT a.i, a.j + c.two AS k FROM a, c WHERE a.j >= c.one",
                                "recompute"),
    # beside a WITH query (refused before): the WITH query inlined, the series a table of the state
    "beside a with query": ("WITH w AS (SELECT i, j FROM a WHERE j > 0) SELECT w.i, g.x FROM w, generate_series(1, 2) AS g(x)",
                            "first-order"),
}


def _write(conn: psycopg.Connection, rng: random.Random, step: int) -> str:
    roll = rng.random()
    if step % 25 == 24:
        conn.execute("TRUNCATE a")
        return "truncate"
    if step % 25 == 12:
        conn.execute("BEGIN")
        conn.execute("INSERT INTO a VALUES (1, 1), (2, 2)")
        conn.execute("ROLLBACK")
        return "rollback"
    if roll < 0.45:
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO a VALUES (%s, %s)", [(rng.choice([None, 0, 1, 2, 3, 4, 5]), rng.randint(0, 9))
                                                             for _ in range(rng.choice([1, 3]))])
        return "insert"
    if roll < 0.55:
        conn.execute("INSERT INTO a SELECT * FROM a ORDER BY random() LIMIT 2")  # duplicates
        return "insert"
    if roll < 0.75:
        conn.execute("DELETE FROM a WHERE ctid IN (SELECT ctid FROM a ORDER BY random() LIMIT 2)")
        conn.execute("DELETE FROM a WHERE i = -1")  # deletes nothing
        return "delete"
    if roll < 0.92:
        conn.execute("UPDATE a SET i = (coalesce(i, 0) + 1) % 6 WHERE ctid IN (SELECT ctid FROM a ORDER BY random() LIMIT 2)")
        return "update"
    conn.execute("INSERT INTO a VALUES (NULL, NULL)")
    return "insert"


def _result(conn: psycopg.Connection, query: str) -> list[tuple]:
    return sorted(conn.execute(query).fetchall(), key=repr)


@pytest.mark.parametrize("label", list(QUERIES))
def test_constant_rows_after_every_statement(conn: psycopg.Connection, dsn: str, label: str) -> None:
    conn.execute("CREATE TABLE a (i int, j int); INSERT INTO a VALUES (1, 1), (2, 5), (2, 5), (NULL, 3), (4, 0)")
    conn.execute("SELECT setseed(0.5)")
    query, system = QUERIES[label]
    assert command.create("v_default", query, target=dsn).system == system
    command.create("v_recompute", query, system="recompute", target=dsn)
    rng = random.Random(label)
    kinds, seen = set(), set()
    for step in range(50):
        kinds.add(_write(conn, rng, step))
        expected = _result(conn, query)
        seen.add(repr(expected))
        for name in ("v_default", "v_recompute"):
            assert _result(conn, f"SELECT * FROM {name}") == expected, (name, step)
    assert {"insert", "delete", "update", "truncate", "rollback"} <= kinds
    assert len(seen) >= (1 if label == "no FROM" else 10)  # the result moved
    for name in ("v_default", "v_recompute"):
        assert command.verify(name, target=dsn).ok
        command.drop(name, target=dsn)
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'pgivm_v%'").fetchone() == (0,)


def test_the_rows_live_in_the_state_schema_and_the_view_keeps_its_sql(conn: psycopg.Connection, dsn: str) -> None:
    conn.execute("CREATE TABLE a (i int, j int)")
    command.create("v", "SELECT a.i, g.x FROM a JOIN generate_series(1, 3) AS g(x) ON a.i = g.x", target=dsn)
    assert conn.execute("SELECT x FROM pgivm_v.static_1 ORDER BY x").fetchall() == [(1,), (2,), (3,)]
    assert "generate_series(1, 3)" in command.explain("v", target=dsn)[1]


@pytest.mark.parametrize("query, says", [
    ("SELECT a.i FROM a, generate_series(1, a.j) AS g(x)", "generate_series is kept as constant rows: its values must be"),
    ("SELECT a.i FROM a, generate_series(1, random()::int) AS g(x)", "its values must be constants"),
    ("SELECT v.column1 FROM a, (VALUES (a.i)) AS v", "VALUES is kept as constant rows"),
    ("SELECT a.i FROM a, (VALUES (1), (1, 2)) AS v(x)", "VALUES lists must all have the same length"),
    ("SELECT a.i FROM a, generate_series(1, 3) AS g(x, y)", "generate_series gives one column, 2 are named"),
])
def test_what_is_not_constant_is_refused_in_one_line(conn: psycopg.Connection, dsn: str, query: str, says: str) -> None:
    conn.execute("CREATE TABLE a (i int, j int)")
    with pytest.raises(PgivmError) as err:
        command.create("v", query, target=dsn)
    assert says in str(err.value) and "\n" not in err.value.message
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgivm_v'").fetchone() == (0,)

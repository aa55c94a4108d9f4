"""min, max and count(DISTINCT) (issue 22) under first-order (each group's values kept with their
multiplicities in an index, no rescan of a base table) and recompute: grouped and not, over expressions, beside counts and sums, with
HAVING, deleting the current extreme again and again (the next one must come from the index), NULL
values skipped, groups emptied and refilled, immediate and deferred, after every statement against
PostgreSQL (count(DISTINCT) falls when the last copy of a value leaves). F-IVM refuses them in one
line and first-order is the default.
"""

from __future__ import annotations

import random

import psycopg
import pytest

from pgivm import command

QUERIES = {
    "grouped": ("SELECT s.c, min(r.a) AS lo, max(r.a) AS hi, count(*) AS n, sum(r.a) AS sa "
                "FROM r JOIN s ON r.b = s.b GROUP BY s.c"),
    "expression": "SELECT max(r.a * 2 - s.c) AS m, min(r.a + s.c) AS l FROM r JOIN s ON r.b = s.b",
    "having": ("SELECT r.b, max(r.a) AS hi FROM r JOIN s ON r.b = s.b WHERE s.c < 3 GROUP BY r.b "
               "HAVING max(r.a) > 2"),
    "count distinct": ("SELECT s.c, count(DISTINCT r.a) AS d, count(DISTINCT r.a + s.b) AS e, count(*) AS n "
                       "FROM r JOIN s ON r.b = s.b GROUP BY s.c"),
    "count distinct, no group": "SELECT count(DISTINCT r.a) AS d, min(r.a) AS lo FROM r JOIN s ON r.b = s.b",
    # one table: its delta query has no condition at all (its WHERE was left empty, a syntax error)
    "one table": "SELECT min(a) AS lo, max(a) AS hi, count(DISTINCT b) AS d FROM r",
}


def _write(conn: psycopg.Connection, rng: random.Random) -> str:
    table = rng.choice(["r", "r", "s"])
    roll = rng.random()
    if roll < 0.55:
        if table == "r":
            conn.execute("INSERT INTO r VALUES (%s, %s)", [rng.choice([None, 0, 1, 2, 3, 5, 8, 9]), rng.randint(0, 2)])
        else:
            conn.execute("INSERT INTO s VALUES (%s, %s)", [rng.randint(0, 2), rng.choice([None, 0, 1, 2, 3])])  # NULL groups too
        return "insert"
    if roll < 0.8 and table == "r":  # the current maximum of a group goes (one copy of it)
        conn.execute("DELETE FROM r WHERE ctid = (SELECT ctid FROM r WHERE b = %s AND a IS NOT NULL "
                     "ORDER BY a DESC LIMIT 1)", [rng.randint(0, 2)])
        return "delete max"
    if roll < 0.9:
        conn.execute(f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} ORDER BY random() LIMIT 2)")
        return "delete"
    conn.execute("UPDATE r SET a = a + 4 WHERE ctid = (SELECT ctid FROM r ORDER BY a NULLS LAST LIMIT 1)")
    return "update"


@pytest.mark.parametrize("refresh", ["immediate", "deferred"])
@pytest.mark.parametrize("label", list(QUERIES))
def test_min_and_max_after_every_statement(conn: psycopg.Connection, dsn: str, label: str, refresh: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    conn.execute("SELECT setseed(0.25)")  # ORDER BY random() in the writes: the same stream each run
    rng = random.Random(f"{label}:{refresh}")
    for _ in range(30):
        _write(conn, rng)
    query = QUERIES[label]
    options = {"refresh": "deferred", "budget": 4} if refresh == "deferred" else {}
    assert command.create("v_default", query, target=dsn, **options).system == "first-order"
    views = ["v_default"]
    if refresh == "immediate":
        command.create("v_recompute", query, system="recompute", target=dsn)
        views.append("v_recompute")
    kinds, seen = set(), set()
    for step in range(60):
        kinds.add(_write(conn, rng))
        expected = sorted(conn.execute(query).fetchall(), key=repr)
        seen.add(repr(expected))
        for name in views:
            assert sorted(conn.execute(f"SELECT * FROM {name}").fetchall(), key=repr) == expected, (name, step)
    assert {"insert", "delete max", "delete", "update"} <= kinds and len(seen) >= 3  # the result moved (3 states at least)
    for name in views:
        assert command.verify(name, target=dsn).ok


def test_explain_says_which_system_and_why(conn: psycopg.Connection, dsn: str) -> None:
    """Issue 22: explain names the chosen system, whether it is the default, and why each faster
    system refused the query."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    command.create("v", QUERIES["grouped"], target=dsn)
    command.create("w", QUERIES["grouped"], system="recompute", target=dsn)
    lines = command.explain("v", target=dsn)
    assert lines[2].startswith("system: first-order, the default for this query"), lines
    assert lines[3].startswith("  not ivme: ") and lines[4].startswith("  not fivm: ") and "min" in lines[4].lower(), lines
    assert command.explain("w", target=dsn)[2].startswith("system: recompute, the default would be first-order")

"""Aggregates over computed values and FILTER (issue 22): sum, avg, min, max, count and
count(DISTINCT) over CASE, coalesce, /, casts and PostgreSQL's immutable functions, and
``agg(x) FILTER (WHERE c)``, under first-order (the default: it evaluates the argument on each
joined row) and recompute, after every statement against PostgreSQL's own evaluation of the same
SQL, with NULLs, duplicates, deletes, UPDATEs of join and summed columns, TRUNCATE and rollbacks.
These queries compute on two tables' columns or with operations that may fail (``/``), which
F-IVM refuses in one line (``tests/systems/fivm/test_fivm_computed.py`` has those it takes), and so
does a deferred first-order view (its actions read rows of older states, where such a value may fail).
"""

from __future__ import annotations

import random

import psycopg
import pytest

from conftest import result_differences
from pgivm import command
from pgivm.errors import UnsupportedQuery

QUERIES = {
    "case and filter": ("SELECT s.c, sum(CASE WHEN r.a > 2 THEN r.a * s.c ELSE 0 END) AS big, "
                        "count(*) FILTER (WHERE r.a IS NULL) AS nulls, sum(r.a) FILTER (WHERE s.c <> 1) AS f, "
                        "count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY s.c"),
    "functions": ("SELECT avg(coalesce(r.a, 0) / 2.0) AS half, max(coalesce(r.a, -1) + s.c) AS hi, "
                  "min(abs(r.a - 3)) AS near, count(DISTINCT r.a % 3) AS d, sum(greatest(r.a, s.c)) AS g "
                  "FROM r JOIN s ON r.b = s.b"),
    "floats": ("SELECT s.c, sum(CASE WHEN r.f > 0 THEN r.f ELSE -r.f END) AS l1, avg(r.f * 2) FILTER (WHERE r.a > 1) AS x "
               "FROM r JOIN s ON r.b = s.b GROUP BY s.c"),
    "no group, filter only": "SELECT count(*) FILTER (WHERE r.a > s.c) AS above, count(r.a) AS n FROM r JOIN s ON r.b = s.b",
    "group by arithmetic": "SELECT r.a + s.c AS g, count(*) AS n, sum(r.b) AS sb FROM r JOIN s ON r.b = s.b GROUP BY r.a + s.c",
    "count distinct, filtered": ("SELECT s.c, count(DISTINCT r.a) FILTER (WHERE r.a > 1) AS d, "
                                 "count(DISTINCT r.a % 3) FILTER (WHERE s.c <> 1) AS m FROM r JOIN s ON r.b = s.b GROUP BY s.c"),
}
FLOATS = [None, 0.0, 1.5, -2.25, 1e16, 1.0, float("inf"), float("-inf"), float("nan")]


def _write(conn: psycopg.Connection, rng: random.Random) -> str:
    roll = rng.random()
    table = rng.choice(["r", "r", "s"])
    if roll < 0.5:
        if table == "r":
            rows = [(rng.choice([None, 0, 1, 2, 3, 5, 8]), rng.randint(0, 2), rng.choice(FLOATS)) for _ in range(rng.randint(1, 3))]
            conn.execute("INSERT INTO r VALUES " + ", ".join(["(%s, %s, %s)"] * len(rows)), [v for row in rows for v in row])
        else:
            conn.execute("INSERT INTO s VALUES (%s, %s), (%s, %s)", [rng.randint(0, 2), rng.choice([None, 0, 1, 2]),
                                                                   rng.randint(0, 2), rng.randint(0, 2)])
        return "insert"
    if roll < 0.75:
        conn.execute(f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} ORDER BY random() LIMIT 2)")
        return "delete"
    if roll < 0.85:
        conn.execute("UPDATE r SET b = (b + 1) % 3, a = a + 1 WHERE ctid = (SELECT ctid FROM r ORDER BY random() LIMIT 1)")
        return "update"
    if roll < 0.95:
        with conn.transaction(force_rollback=True):
            conn.execute("INSERT INTO r VALUES (9, 1, 2.5); DELETE FROM s")
        return "rollback"
    conn.execute(f"TRUNCATE {table}")
    return "truncate"


@pytest.mark.parametrize("label", list(QUERIES))
def test_computed_arguments_after_every_statement(conn: psycopg.Connection, dsn: str, label: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int, f float8); CREATE TABLE s (b int, c int)")
    conn.execute("SELECT setseed(0.5)")  # ORDER BY random() in the writes: the same stream each run
    rng = random.Random(label)
    for _ in range(12):
        _write(conn, rng)
    query = QUERIES[label]
    keys = 1 if "GROUP BY" in query else 0
    assert command.create("v", query, target=dsn).system == "first-order"
    command.create("w", query, system="recompute", target=dsn)
    seen, kinds = set(), set()
    for step in range(45):
        kinds.add(_write(conn, rng))
        for view in ("v", "w"):
            assert result_differences(conn, view, query, keys) == [], (view, step)
        seen.add(repr(sorted(map(repr, conn.execute("SELECT * FROM v").fetchall()))))
    assert len(seen) > 5 and {"insert", "delete", "update", "rollback"} <= kinds
    assert command.verify("v", target=dsn).ok


@pytest.mark.parametrize("label", ["no group, filter only", "count distinct, filtered"])
def test_deferred_views_over_values_that_cannot_fail(conn: psycopg.Connection, dsn: str, label: str) -> None:
    """Comparisons across tables and FILTER compute on rows of older states too (a deferred view's
    actions): nothing there can fail, so first-order takes them deferred; reads every fourth
    statement, so that three wait."""
    conn.execute("CREATE TABLE r (a int, b int, f float8); CREATE TABLE s (b int, c int)")
    conn.execute("SELECT setseed(0.5)")
    rng = random.Random(f"deferred {label}")
    query = QUERIES[label]
    keys = 1 if "GROUP BY" in query else 0
    assert command.create("v", query, target=dsn, refresh="deferred", budget=10).system == "first-order"
    kinds = set()
    for step in range(48):
        kinds.add(_write(conn, rng))
        if step % 4 == 3:
            assert result_differences(conn, "v", query, keys) == [], step
    assert {"insert", "delete", "update"} <= kinds
    assert command.verify("v", target=dsn).ok


def test_fivm_and_deferred_views_refuse_computed_arguments_in_one_line(conn: psycopg.Connection, dsn: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int, f float8); CREATE TABLE s (b int, c int)")
    query = QUERIES["case and filter"]
    with pytest.raises(UnsupportedQuery, match="reads the columns of several tables: F-IVM computes a value on one") as fivm:
        command.create("v", query, system="fivm", target=dsn)
    with pytest.raises(Exception, match="keep such a view immediate") as deferred:
        command.create("v", query, target=dsn, refresh="deferred", budget=10)
    for error in (fivm, deferred):
        assert "\n" not in str(error.value).strip()
    assert conn.execute("SELECT count(*) FROM pg_class WHERE relname = 'v'").fetchone() == (0,)
    with pytest.raises(UnsupportedQuery, match="not a number"):
        command.create("v", "SELECT sum(CASE WHEN r.a > 0 THEN 'x' END) FROM r JOIN s ON r.b = s.b", target=dsn)
    with pytest.raises(UnsupportedQuery, match=r"random\(\) changes with time or chance"):
        command.create("v", "SELECT sum(r.a * random()) FROM r JOIN s ON r.b = s.b", target=dsn)


def test_a_computed_argument_that_fails_fails_the_statement_as_postgres_does(conn: psycopg.Connection, dsn: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int, f float8); CREATE TABLE s (b int, c int)")
    conn.execute("INSERT INTO r VALUES (4, 1, 0); INSERT INTO s VALUES (1, 2), (2, 0)")
    query = "SELECT sum(r.a / s.c) AS q FROM r JOIN s ON r.b = s.b"
    command.create("v", query, target=dsn)
    with pytest.raises(psycopg.errors.DivisionByZero):
        conn.execute("INSERT INTO r VALUES (5, 2, 0)")  # 5 / 0 in the joined row
    conn.execute("INSERT INTO r VALUES (5, 3, 0)")  # joins nothing: never divided
    assert result_differences(conn, "v", query, 0) == []
    assert conn.execute("SELECT q FROM v").fetchone() == (2,)


BOOLS = ("SELECT s.c, bool_and(r.a > 1), bool_or(r.g) AS any_g, bool_and(r.g) FILTER (WHERE r.a IS NOT NULL) AS all_g, "
         "count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY s.c")


def test_bool_and_and_bool_or_after_every_statement(conn: psycopg.Connection, dsn: str) -> None:
    """bool_and and bool_or as two counts each (NULL where no value is non-NULL), NULL values and
    groups whose last false or true row leaves, against PostgreSQL's own bool_and and bool_or."""
    conn.execute("CREATE TABLE r (a int, b int, g boolean); CREATE TABLE s (b int, c int)")
    rng = random.Random("bools")
    conn.execute("INSERT INTO s VALUES (0, 0), (1, 1), (2, 1), (2, 2)")
    assert command.create("v", BOOLS, target=dsn).system == "fivm"  # each argument reads r alone
    command.create("w", BOOLS, system="recompute", target=dsn)
    command.create("x", BOOLS, system="first-order", target=dsn)
    names = [d.name for d in conn.execute(f"{BOOLS} LIMIT 0").description]
    assert names == ["c", "bool_and", "any_g", "all_g", "n"]
    seen = set()
    for step in range(60):
        if rng.random() < 0.6:
            conn.execute("INSERT INTO r VALUES (%s, %s, %s)", [rng.choice([None, 0, 1, 2, 5]), rng.randint(0, 2),
                                                               rng.choice([None, True, False])])
        else:
            conn.execute("DELETE FROM r WHERE ctid = (SELECT ctid FROM r WHERE b = %s ORDER BY g NULLS FIRST LIMIT 1)",
                         [rng.randint(0, 2)])
        for view in ("v", "w", "x"):
            assert [d.name for d in conn.execute(f"SELECT * FROM {view} LIMIT 0").description] == names
            assert result_differences(conn, view, BOOLS, 1) == [], (view, step)
        seen.update(repr(row[1:4]) for row in conn.execute("SELECT * FROM v"))
    assert {"(True, True, True)", "(False, False, False)"} <= seen or len(seen) > 6, seen
    assert any("None" in s for s in seen)
    assert command.verify("v", target=dsn).ok and command.verify("x", target=dsn).ok


GROUPED = ("SELECT r.a % 3 AS m, lower(s.t) AS lt, (r.a % 3) * 10 AS tens, count(*) AS n, sum(r.b) AS sb, max(r.a) AS hi, "
           "count(DISTINCT s.t) AS texts, min(s.t) AS first FROM r JOIN s ON r.b = s.b GROUP BY r.a % 3, lower(s.t)")


@pytest.mark.parametrize("refresh", ["immediate", "deferred"])
def test_group_by_expressions_after_every_statement(conn: psycopg.Connection, dsn: str, refresh: str) -> None:
    """GROUP BY expressions (issue 22): each a value of the joined row keying the result, NULL
    groups included (r.a NULL, s.t NULL), the SELECT list showing them as written and computing
    on them; groups emptied and refilled. With max, min and count(DISTINCT) F-IVM refuses the
    view. Deferred, first-order computes them on rows of older states too: it takes them, as none
    can fail (``r.a % 3``, ``lower``; a value that may fail is refused, above)."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, t text)")
    conn.execute("SELECT setseed(0.75)")
    with pytest.raises(UnsupportedQuery, match=r"MAX\(r.a\): F-IVM's rings have no min, max"):
        command.create("v", GROUPED, system="fivm", target=dsn)
    rng = random.Random("grouped")
    options = {"refresh": "deferred", "budget": 10} if refresh == "deferred" else {}
    assert command.create("v", GROUPED, target=dsn, **options).system == "first-order"
    command.create("w", GROUPED, system="recompute", target=dsn)
    names = [d.name for d in conn.execute(f"{GROUPED} LIMIT 0").description]
    assert names == ["m", "lt", "tens", "n", "sb", "hi", "texts", "first"]
    sizes = set()
    for step in range(60):
        if rng.random() < 0.6:
            if rng.random() < 0.6:
                conn.execute("INSERT INTO r VALUES (%s, %s)", [rng.choice([None, 0, 1, 2, 4, 7, 9]), rng.randint(0, 3)])
            else:
                conn.execute("INSERT INTO s VALUES (%s, %s)", [rng.randint(0, 3), rng.choice([None, "A", "a", "b", "B"])])
        elif rng.random() < 0.8:
            table = rng.choice(["r", "s"])
            conn.execute(f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} ORDER BY random() LIMIT 2)")
        else:
            conn.execute("UPDATE r SET a = a + 1 WHERE ctid = (SELECT ctid FROM r ORDER BY random() LIMIT 1)")
        if refresh == "deferred" and step % 4 != 3:
            continue  # a read refreshes: let a few statements wait, the actions then read older states
        for view in ("v", "w"):
            assert [d.name for d in conn.execute(f"SELECT * FROM {view} LIMIT 0").description] == names
            assert result_differences(conn, view, GROUPED, 3) == [], (view, step)
        sizes.add(conn.execute("SELECT count(*) FROM v").fetchone()[0])
    assert len(sizes) > 3
    assert command.verify("v", target=dsn).ok

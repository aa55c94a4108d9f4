"""F-IVM over computed values (issue 22): aggregates over CASE, coalesce, abs and numeric
arithmetic, ``agg(x) FILTER (WHERE c)``, GROUP BY expressions, HAVING and DISTINCT over them, each
value computed on one table's rows at that table's leaf view (summed there, or keying it when it is
a GROUP BY expression), compared after every statement with PostgreSQL's own evaluation of the same
SQL, with NULLs, duplicates, floats (Infinity, NaN), deletes, UPDATEs of join and computed-over
columns, TRUNCATE, multi-row statements and rollbacks.

A leaf evaluates the value on every row of its table, joining or not, where PostgreSQL's query
evaluates it on joined rows only: so F-IVM takes a value only when it cannot fail on a row
(``scalar.may_raise``: no division but by a non-zero constant, no integer or float overflow, no
cast), and one that reads two
tables' columns goes to first-order, which computes it on each joined row.
"""

from __future__ import annotations

import random

import psycopg
import pytest

from conftest import result_differences
from pgivm import command
from pgivm.errors import UnsupportedQuery

QUERIES = {
    "case, filter, coalesce": (
        "SELECT r.a, sum(CASE WHEN s.c > 0 THEN s.c ELSE 0 END) AS pos, count(*) FILTER (WHERE s.c > 1) AS big, "
        "avg(s.c) FILTER (WHERE s.t IS NOT NULL) AS named, sum(coalesce(s.c, -1)) AS filled, count(*) AS n "
        "FROM r JOIN s ON r.b = s.b GROUP BY r.a", 1),
    "group by expressions": (
        "SELECT r.a % 3 AS m, lower(s.t) AS lt, r.f::text AS ft, count(*) AS n, sum(r.n) AS sn, "
        "sum(CASE WHEN s.t LIKE 'a%' THEN 1 ELSE 0 END) AS likes FROM r JOIN s ON r.b = s.b "
        "GROUP BY r.a % 3, lower(s.t), r.f::text", 3),
    "floats": (
        "SELECT s.c, sum(CASE WHEN r.f > 0 THEN r.f ELSE -r.f END) AS l1, sum(coalesce(r.f, 0)) FILTER (WHERE r.a > 1) AS x, "
        "avg(abs(r.f)) AS mean FROM r JOIN s ON r.b = s.b GROUP BY s.c", 1),
    "numeric arithmetic": (
        "SELECT sum(r.n * r.n - 1) AS sq, avg(r.n + 0.5) FILTER (WHERE r.n > 1) AS an, sum(round(r.n)) AS rounded, "
        "avg(coalesce(r.n, 0) / 2.0) AS half, sum(r.a / 3) AS thirds, sum(r.a / 0.5) AS doubled "  # by non-zero constants
        "FROM r JOIN s ON r.b = s.b", 0),
    "having and a projection": (
        "SELECT (r.a % 3) * 10 AS tens, count(*) AS n, sum(s.c) FILTER (WHERE s.c IN (1, 2)) AS f "
        "FROM r JOIN s ON r.b = s.b GROUP BY r.a % 3 HAVING count(*) > 1", 1),
    # a product with a sum in it over one table's columns: one value of the row (integers beside a
    # numeric constant are computed in numeric, which never overflows)
    "products over one table": (
        "SELECT s.c, sum(r.n * (1 - r.n)) AS nn, sum(1.0 * r.a * (1.5 - r.b) * s.c) AS abc FROM r JOIN s ON r.b = s.b "
        "GROUP BY s.c", 1),
    "distinct": ("SELECT DISTINCT r.a % 2 AS parity, coalesce(s.t, '?') AS t FROM r JOIN s ON r.b = s.b", 2),
    "three tables": (
        "SELECT lower(u.name) AS who, sum(CASE WHEN r.a IS NULL THEN 0 ELSE 1 END) AS known, count(*) AS n "
        "FROM r JOIN s ON r.b = s.b JOIN u ON u.c = s.c GROUP BY lower(u.name)", 1),
}
FLOATS = [None, 0.0, 1.5, -2.25, 1e16, 1.0, -1.0, 3.0, 2.5, float("inf"), float("nan")]


def _tables(conn: psycopg.Connection) -> None:
    conn.execute("CREATE TABLE r (a int, b int, f float8, n numeric); CREATE TABLE s (b int, c int, t text); "
                 "CREATE TABLE u (c int, name text)")
    conn.execute("INSERT INTO u VALUES (0, 'Zero'), (1, 'one'), (1, 'ONE'), (2, 'two'), (NULL, 'none')")


def _write(conn: psycopg.Connection, rng: random.Random) -> str:
    roll, table = rng.random(), rng.choice(["r", "r", "s", "s", "u"])
    if roll < 0.42:
        rows = rng.randint(1, 3)
        if table == "r":
            conn.execute("INSERT INTO r VALUES " + ", ".join(["(%s, %s, %s, %s)"] * rows), [
                v for _ in range(rows) for v in (rng.choice([None, 0, 1, 2, 3, 5, 8]), rng.choice([None, 0, 1, 2, 3]),
                                                 rng.choice(FLOATS), rng.choice([None, 0, 1, 2.5, -3.25]))])
        elif table == "s":
            conn.execute("INSERT INTO s VALUES " + ", ".join(["(%s, %s, %s)"] * rows), [
                v for _ in range(rows) for v in (rng.randint(0, 3), rng.choice([None, 0, 1, 2]),
                                                 rng.choice([None, "a", "A", "ab", "b"]))])
        else:
            conn.execute("INSERT INTO u VALUES (%s, %s)", [rng.choice([None, 0, 1, 2]), rng.choice(["one", "Two", None])])
        return "insert"
    if roll < 0.46:  # more rows than F-IVM's batch path takes (BULK_ROWS): its bulk path, planned afresh
        conn.execute("INSERT INTO r SELECT g % 7, g % 4, g * 0.5, g % 3 FROM generate_series(1, 80) g")
        return "bulk"
    if roll < 0.55:  # a duplicate of a present row
        conn.execute(f"INSERT INTO {table} SELECT * FROM {table} ORDER BY random() LIMIT 1")
        return "duplicate"
    if roll < 0.72:
        conn.execute(f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} ORDER BY random() LIMIT 2)")
        return "delete"
    if roll < 0.75:
        conn.execute(f"DELETE FROM {table} WHERE false")
        return "delete absent"
    if roll < 0.85:
        update = rng.choice(["b = (b + 1) % 4", "a = a + 1", "f = -f", "n = n * 2"])
        conn.execute(f"UPDATE r SET {update} WHERE ctid IN (SELECT ctid FROM r ORDER BY random() LIMIT 2)")
        conn.execute("UPDATE s SET t = upper(t), c = (c + 1) % 3 WHERE ctid = (SELECT ctid FROM s ORDER BY random() LIMIT 1)")
        return "update"
    if roll < 0.95:
        with conn.transaction(force_rollback=True):
            conn.execute("INSERT INTO r VALUES (9, 1, 2.5, 4); DELETE FROM s; UPDATE u SET name = 'x'")
        return "rollback"
    return _truncate(conn, table)


def _truncate(conn: psycopg.Connection, table: str) -> str:
    conn.execute(f"TRUNCATE {table}")
    return "truncate"


@pytest.mark.parametrize("label", list(QUERIES))
def test_computed_values_under_fivm_after_every_statement(conn: psycopg.Connection, dsn: str, label: str) -> None:
    _tables(conn)
    conn.execute("SELECT setseed(0.25)")  # ORDER BY random() in the writes: the same stream each run
    rng = random.Random(label)
    for _ in range(10):
        _write(conn, rng)
    query, keys = QUERIES[label]
    # the default: F-IVM comes before first-order, but for a DISTINCT of rows (registry.tried)
    assert command.parse(query)[0].name == ("first-order" if label == "distinct" else "fivm")
    assert command.create("v", query, system="fivm", target=dsn).system == "fivm"
    seen, kinds = set(), set()
    for step in range(50):
        kinds.add(_write(conn, rng) if step != 30 else _truncate(conn, rng.choice(["r", "s"])))  # one at least
        assert result_differences(conn, "v", query, keys) == [], step
        seen.add(repr(sorted(map(repr, conn.execute("SELECT * FROM v").fetchall()))))
    assert len(seen) > 5, f"the view hardly changed: {len(seen)} states"
    assert {"insert", "bulk", "duplicate", "delete", "update", "rollback", "truncate"} <= kinds, kinds
    report = command.verify("v", target=dsn)
    assert report.ok, [str(f) for f in report.failures]


def test_a_deferred_fivm_view_computes_its_values_when_it_refreshes(conn: psycopg.Connection, dsn: str) -> None:
    """A value that cannot fail may be computed later, on rows of older states (a deferred view)."""
    _tables(conn)
    query, keys = QUERIES["group by expressions"]
    assert command.create("v", query, target=dsn, refresh="deferred", budget=10).system == "fivm"
    rng = random.Random("deferred")
    for step in range(25):
        _write(conn, rng)
        assert result_differences(conn, "v", query, keys) == [], step  # a read refreshes first
    assert command.verify("v", target=dsn).ok


@pytest.mark.parametrize("query,reason", [
    ("SELECT sum(CASE WHEN r.a > 2 THEN s.c END) FROM r JOIN s ON r.b = s.b", "reads the columns of several tables"),
    ("SELECT sum(r.n / r.a) FROM r JOIN s ON r.b = s.b", r"/ \(by zero\) may fail on a row"),
    ("SELECT sum(r.a / -1) FROM r JOIN s ON r.b = s.b", r"/ \(by zero\) may fail on a row"),  # the smallest int / -1
    ("SELECT sum(r.f / 2) FROM r JOIN s ON r.b = s.b", r"/ \(by zero\) may fail on a row"),  # a float may underflow
    ("SELECT s.c, sum(r.f * 2) FILTER (WHERE r.a > 0) FROM r JOIN s ON r.b = s.b GROUP BY s.c", r"\* \(overflow"),
    ("SELECT sum(-r.a) FROM r JOIN s ON r.b = s.b", "integer arithmetic"),
    ("SELECT s.t::int AS x, count(*) FROM r JOIN s ON r.b = s.b GROUP BY s.t::int", "a cast to int may fail"),
])
def test_fivm_refuses_a_value_it_would_compute_on_rows_postgres_never_reads(conn: psycopg.Connection, dsn: str,
                                                                            query: str, reason: str) -> None:
    """One line naming the value and why; nothing created; the default falls to first-order, which
    computes on joined rows only (a row that joins nothing is never divided)."""
    _tables(conn)
    with pytest.raises(UnsupportedQuery, match=reason) as refused:
        command.create("v", query, system="fivm", target=dsn)
    assert "\n" not in str(refused.value).strip() and "first-order" in str(refused.value)
    assert conn.execute("SELECT count(*) FROM pg_class WHERE relname = 'v'").fetchone() == (0,)
    assert command.create("v", query, target=dsn).system == "first-order"

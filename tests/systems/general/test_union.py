"""UNION ALL and UNION of SELECT branches (issue 22), read as one query of LEFT JOINs from a
relation of branch numbers (``pgivm.query.union``), under first-order (the default: a change of a
branch's table is that branch's own change, whatever the other branches hold) and recompute,
compared with PostgreSQL's own evaluation of the UNION after every statement: inserts with
duplicates and NULLs, deletes (of absent rows too), UPDATEs of join columns, TRUNCATE and rolled
back transactions.
"""

from __future__ import annotations

import random

import psycopg
import pytest

from pgivm import command
from pgivm.errors import PgivmError

QUERIES = {
    "two tables": "SELECT a, b FROM r UNION ALL SELECT b, c FROM s",
    "one table twice": "SELECT r.a FROM r WHERE r.a > 2 UNION ALL SELECT r.b FROM r",
    "join and table, distinct": "SELECT r.a, s.c FROM r JOIN s ON r.b = s.b UNION SELECT a, b FROM r",
    "three branches, constants": ("SELECT a AS x, 'r' AS source FROM r UNION ALL SELECT c, 's' FROM s "
                                  "UNION ALL SELECT 7, 'big' FROM s WHERE c > 3"),
    "outer join in a branch": "SELECT r.a, s.c FROM r LEFT JOIN s ON r.b = s.b UNION ALL SELECT s.b, s.c FROM s",
    # a table joined to itself inside a branch (first-order refused it before: now the self-join rule)
    "self-join in a branch": "SELECT r.a, r2.b FROM r JOIN r AS r2 ON r.b = r2.a UNION ALL SELECT s.b, s.c FROM s",
    "self outer join and the table again": ("SELECT r.a, r2.a AS a2 FROM r LEFT JOIN r AS r2 ON r2.b = r.a "
                                            "UNION ALL SELECT r.b, r.a FROM r"),
    "computed items": "SELECT a + 1 AS n, coalesce(b, 0) AS m FROM r UNION ALL SELECT c * 2, d FROM s, t WHERE s.b = t.b",
    # a WITH query before UNION read by both branches, and a subquery in a branch: merged into each
    # branch first (refused before)
    "with query before union": ("WITH x AS (SELECT a, b FROM r WHERE a > 1) SELECT x.a, x.b FROM x "
                                "UNION ALL SELECT x.b, s.c FROM x JOIN s ON s.b = x.a"),
    "subquery in a branch, distinct": ("SELECT q.a, q.c FROM (SELECT r.a, s.c FROM r JOIN s ON s.b = r.b WHERE s.c > 1) AS q "
                                       "UNION SELECT t.b, t.d FROM t"),
    # USING and NATURAL JOIN in a branch: written as ON before the branch is parenthesized (were
    # refused as "JOIN s#1 USING or NATURAL, in or of a parenthesized join"); b unqualified is r's
    "natural join and using in branches": ("SELECT b, r.a, s.c FROM r NATURAL JOIN s UNION ALL "
                                           "SELECT b, t.d, s.c FROM t JOIN s USING (b) WHERE b > 0"),
    # a RIGHT join's USING column is the right side's, a FULL join's both coalesced
    "right and full join using in branches": ("SELECT b, s.c FROM r RIGHT JOIN s USING (b) "
                                              "UNION ALL SELECT b, t.d FROM r FULL JOIN t USING (b)"),
    # a FULL join's merged column joined again by USING (was "column b ... is ambiguous"), and an
    # aliased join in a branch (was "a subquery in a branch of UNION")
    "using after a full join using": ("SELECT b, s.c FROM r FULL JOIN s USING (b) JOIN t USING (b) "
                                      "UNION ALL SELECT r0.b, x.d FROM r AS r0 JOIN (r JOIN t USING (b)) AS x USING (a)"),
}


def _write(conn: psycopg.Connection, rng: random.Random, step: int) -> str:
    table = rng.choice(["r", "s", "t"])
    if step % 20 == 19:
        conn.execute(f"TRUNCATE {table}")
        return "truncate"
    if step % 20 == 9:
        conn.execute("BEGIN")
        conn.execute(f"INSERT INTO {table} VALUES (1, 1), (2, 2)")
        conn.execute("ROLLBACK")
        return "rollback"
    roll = rng.random()
    if roll < 0.45:
        with conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {table} VALUES (%s, %s)", [(rng.choice([None, 0, 1, 2, 3, 4]), rng.randint(0, 5))
                                                                     for _ in range(rng.choice([1, 3]))])
        return "insert"
    if roll < 0.55:
        conn.execute(f"INSERT INTO {table} SELECT * FROM {table} ORDER BY random() LIMIT 2")  # duplicates
        return "insert"
    if roll < 0.8:
        conn.execute(f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} ORDER BY random() LIMIT 2)")
        conn.execute(f"DELETE FROM {table} WHERE b = -1")  # deletes nothing
        return "delete"
    conn.execute(f"UPDATE {table} SET b = (coalesce(b, 0) + 1) % 4 WHERE ctid IN (SELECT ctid FROM {table} ORDER BY random() LIMIT 2)")
    return "update"


def _result(conn: psycopg.Connection, query: str) -> list[tuple]:
    return sorted(conn.execute(query).fetchall(), key=repr)


@pytest.mark.parametrize("label", list(QUERIES))
def test_union_after_every_statement(conn: psycopg.Connection, dsn: str, label: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (b int, d int)")
    conn.execute("SELECT setseed(0.5)")
    rng = random.Random(label)
    for table in ("r", "s", "t"):
        with conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {table} VALUES (%s, %s)", [(rng.randint(0, 4), rng.randint(0, 5)) for _ in range(6)])
    query = QUERIES[label]
    assert command.create("v_default", query, target=dsn).system == "first-order"
    command.create("v_recompute", query, system="recompute", target=dsn)
    assert [c.name for c in conn.execute("SELECT * FROM v_default LIMIT 0").description] == \
        [c.name for c in conn.execute(f"SELECT * FROM ({query}) AS q LIMIT 0").description]  # the first branch's names
    kinds, seen = set(), set()
    for step in range(60):
        kinds.add(_write(conn, rng, step))
        expected = _result(conn, query)
        seen.add(repr(expected))
        for name in ("v_default", "v_recompute"):
            assert _result(conn, f"SELECT * FROM {name}") == expected, (name, step)
    assert {"insert", "delete", "update", "truncate", "rollback"} <= kinds and len(seen) >= 10
    for name in ("v_default", "v_recompute"):
        assert command.verify(name, target=dsn).ok


def test_a_write_reads_its_own_branch_not_the_others(conn: psycopg.Connection, dsn: str) -> None:
    """An insert into r under ``r UNION ALL s`` reads r's change and the branch numbers, not s's
    rows (counted by the transaction's own statistics, which a read of s does show)."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); "
                 "INSERT INTO s SELECT g, g FROM generate_series(1, 20000) g; ANALYZE s")
    command.create("v", "SELECT a, b FROM r UNION ALL SELECT b, c FROM s", target=dsn)
    reads = ("SELECT coalesce(sum(seq_tup_read + coalesce(idx_tup_fetch, 0)), 0) FROM pg_stat_xact_user_tables "
             "WHERE relname = 's'")
    with conn.transaction():  # this backend's counts not yet flushed: deltas within one transaction
        before = conn.execute(reads).fetchone()[0]
        conn.execute("INSERT INTO r VALUES (1, 2)")
        after = conn.execute(reads).fetchone()[0]
        conn.execute("SELECT count(*) FROM s")
        assert conn.execute(reads).fetchone()[0] - after == 20000  # the probe sees a read of s
    assert after - before == 0
    assert conn.execute("SELECT count(*) FROM v").fetchone() == (20001,)


@pytest.mark.parametrize("query, says", [
    ("SELECT a FROM r UNION SELECT b FROM s UNION ALL SELECT a FROM r", "UNION and UNION ALL mixed"),
    ("SELECT a FROM r EXCEPT SELECT b FROM s", "EXCEPT is not supported"),
    ("SELECT a, count(*) FROM r GROUP BY a UNION ALL SELECT b, c FROM s", "a branch of UNION with GROUP BY"),
    ("SELECT a, b FROM r UNION ALL SELECT b FROM s", "the same number of columns"),
    ("SELECT * FROM r UNION ALL SELECT b, c FROM s", "SELECT * in a branch of UNION"),
    ("SELECT a FROM r UNION ALL SELECT b FROM s ORDER BY 1", "ORDER BY after UNION"),
    ("SELECT a FROM r WHERE EXISTS (SELECT 1 FROM s) UNION ALL SELECT b FROM s", "a subquery in a branch of UNION"),
    ("WITH x AS (SELECT b, count(*) AS n FROM r GROUP BY b) SELECT x.b FROM x UNION ALL SELECT s.b FROM s", "aggregates"),
])
def test_what_union_does_not_take_is_refused_in_one_line(conn: psycopg.Connection, dsn: str, query: str, says: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    with pytest.raises(PgivmError) as err:
        command.create("v", query, target=dsn)
    assert says in str(err.value) and "\n" not in err.value.message
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgivm_v'").fetchone() == (0,)


@pytest.mark.parametrize(("system", "query", "says"), [
    ("fivm", "SELECT r.a FROM r UNION ALL SELECT s.b FROM s", "UNION [ALL]: maintained by first-order and recompute"),
    ("ivme", "SELECT r.a FROM r UNION ALL SELECT s.b FROM s", "UNION [ALL]: maintained by first-order and recompute"),
    ("first-order", "SELECT a FROM r UNION ALL SELECT 1 FROM s", "s in a branch of UNION contributes none of its columns"),
])
def test_a_system_refusing_union_names_what_was_written(conn: psycopg.Connection, dsn: str, system: str, query: str,
                                                         says: str) -> None:
    """Not the rewrite's LEFT JOINs and aliases (``LEFT JOIN r#1``, ``s#1``)."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    with pytest.raises(PgivmError) as err:
        command.create("v", query, system=system, target=dsn)
    assert says in err.value.message and "#" not in err.value.message, err.value.message


def test_a_natural_join_of_tables_with_no_common_column_in_a_branch(conn: psycopg.Connection, dsn: str) -> None:
    """A cross product, as PostgreSQL reads it (was refused: 'ON TRUE reads no column')."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE w (x int)")
    query = "SELECT r.a, w.x FROM r NATURAL JOIN w UNION ALL SELECT r.b, r.a FROM r"
    command.create("v", query, target=dsn)
    for statement in ("INSERT INTO r VALUES (1, 2), (3, 4)", "INSERT INTO w VALUES (7), (8)", "DELETE FROM r WHERE a = 1",
                      "INSERT INTO w VALUES (7)", "UPDATE r SET a = 5"):
        conn.execute(statement)
        assert _result(conn, "SELECT * FROM v") == _result(conn, query), statement
    assert len(_result(conn, query)) == 4

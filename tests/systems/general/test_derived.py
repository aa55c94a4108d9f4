"""Subqueries and WITH queries that aggregate (issue 22): each kept as a table of the view's state
(``derived_N``) by triggers on its own tables, which recount the groups a statement touched; every
system then maintains the view over that table as over a base table. Compared with PostgreSQL's
evaluation of the SQL as written after every statement (duplicates, NULL keys, deletes of absent
rows, UPDATEs of join and GROUP BY columns, multi-row statements, TRUNCATE, rollbacks), under
fivm, first-order and recompute where each accepts the query; then verify, upgrade and drop.
"""

from __future__ import annotations

import random
import threading

import psycopg
import pytest

from pgivm import command
from pgivm.errors import PgivmError
from pgivm.query.model import TableRef

QUERIES = {
    "sum per group": "SELECT r.a, x.total FROM r JOIN (SELECT b, sum(c) AS total FROM s GROUP BY b) x ON x.b = r.b",
    # aggregating over a subquery or WITH query that only filters and renames (merged into it first;
    # refused before, found by a held-out review)
    "over a filtering subquery": ("SELECT y.n, count(*) AS groups FROM (SELECT x.k, count(*) AS n FROM (SELECT b AS k, c "
                                  "FROM s WHERE c > 0 OR w IS NULL) x GROUP BY x.k) y GROUP BY y.n"),
    "over a joining subquery": ("SELECT r.a, x.n FROM r JOIN (SELECT y.b, count(*) AS n, sum(y.d) AS sd FROM (SELECT s.b, t.d "
                                "FROM s JOIN t ON s.c = t.c WHERE t.d > 0) y GROUP BY y.b) x ON x.b = r.b"),
    "with chain": ("WITH f AS (SELECT b, w * 2 AS w2 FROM s WHERE c <> 1), g AS (SELECT b, sum(w2) AS total, count(*) AS n "
                   "FROM f GROUP BY b) SELECT r.a, g.total, g.n FROM r JOIN g ON g.b = r.b WHERE g.n > 1"),
    # AND, OR and functions in its WHERE (AND was refused as a function call: found by a fuzzer)
    "with, having": ("WITH x AS (SELECT b, count(*) AS n FROM s WHERE c > 0 AND (w IS NULL OR abs(w) < 7) GROUP BY b "
                     "HAVING count(*) > 1) "
                     "SELECT r.a, sum(x.n) AS total FROM r JOIN x USING (b) GROUP BY r.a"),
    "one row, no group by": "SELECT r.a, y.n, y.m FROM r, (SELECT count(*) AS n, max(w) AS m FROM s) y",
    "distinct of a join, under a left join": ("SELECT r.a, z.k FROM r LEFT JOIN (SELECT DISTINCT s.b, t.d AS k FROM s "
                                              "JOIN t ON s.c = t.c) z ON z.b = r.b"),
    "self-join of three tables": ("SELECT r.a, x.total, x.n FROM r JOIN (SELECT s1.b, sum(s2.w) AS total, count(*) AS n "
                                  "FROM s s1 JOIN s s2 ON s1.c = s2.b JOIN t ON t.c = s1.c WHERE t.d > 0 GROUP BY s1.b) x "
                                  "ON x.b = r.b"),
    "over the view's own table": "SELECT x.b, x.total, r.v FROM (SELECT b, sum(a) AS total FROM r GROUP BY b) x JOIN r ON r.b = x.b",
    "min, max, avg, expression keys": ("SELECT r.a, x.lo, x.hi, x.mean FROM r JOIN (SELECT c % 3 AS k, min(w) AS lo, max(w) AS hi, "
                                       "avg(w) AS mean FROM s GROUP BY c % 3) x ON x.k = r.b"),
    # TPC-H Q18's shape: a semi-join with a subquery that aggregates; and NOT IN, with SQL's NULL rule
    "in (subquery), having": ("SELECT r.a, sum(r.v) AS total FROM r WHERE r.b IN (SELECT b FROM s GROUP BY b "
                              "HAVING sum(w) > 3) GROUP BY r.a"),
    "not in (subquery)": "SELECT r.a, r.b FROM r WHERE r.a NOT IN (SELECT max(c) FROM s GROUP BY b)",
    "with column names, bool_and": ("WITH x(k, n, ok) AS (SELECT b, count(*), bool_and(c > 0) FROM s GROUP BY b) "
                                    "SELECT r.a, x.n, x.ok FROM r JOIN x ON x.k = r.b"),
    "two of them, renamed columns": ("SELECT x.k, x.n, y.m FROM (SELECT b, count(*) FROM s GROUP BY b) AS x(k, n) "
                                     "JOIN (SELECT c, max(d) FROM t GROUP BY c) AS y(k, m) ON x.k = y.k"),
    # over LEFT JOINs, grouped by the preserved side (TPC-H Q13's shape, and a chain of two)
    "count over a left join, grouped again": ("SELECT x.n, count(*) AS custdist FROM (SELECT r.a, count(s.c) AS n FROM r "
                                              "LEFT JOIN s ON r.b = s.b AND s.c > 0 GROUP BY r.a) x GROUP BY x.n"),
    "two left joins": ("SELECT r.a, x.n, x.total FROM r JOIN (SELECT s.b, count(t.d) AS n, sum(t2.d) AS total FROM s "
                       "LEFT JOIN t ON t.c = s.c LEFT OUTER JOIN t t2 ON t2.d = t.c GROUP BY s.b) x ON x.b = r.b"),
    # IN and NOT IN over a join: its DISTINCT values kept (NULLs too: NOT IN's rule)
    "in (a join)": "SELECT r.a, r.b FROM r WHERE r.b IN (SELECT s.b FROM s JOIN t ON s.c = t.c WHERE t.d > 0)",
    "not in (a join)": "SELECT r.a, r.v FROM r WHERE r.a NOT IN (SELECT t.d FROM s, t WHERE s.c = t.c AND s.w > 1)",
    # scalar subqueries compared in WHERE or HAVING (TPC-H Q2, Q11, Q17, Q22): joins with their values
    "compared with a scalar subquery": "SELECT r.a, r.b FROM r WHERE r.v > (SELECT avg(w) FROM s WHERE c > 0)",
    "correlated scalar subquery": "SELECT r.a, r.v FROM r WHERE r.v >= (SELECT avg(s.w) - 1 FROM s WHERE s.b = r.b AND s.c > 0)",
    "correlated by two keys, grouped": ("SELECT r.a, count(*) AS n FROM r, t WHERE t.c = r.a AND "
                                        "(SELECT sum(w) FROM s WHERE s.b = r.b AND t.d = s.c) > r.v GROUP BY r.a"),
    "having compared with a scalar subquery": ("SELECT r.b, sum(r.v) AS total FROM r GROUP BY r.b "
                                               "HAVING sum(r.v) > (SELECT sum(w) FROM s) / 3"),
    # correlated, with a value over no rows (count's 0, a coalesce around it): a LEFT JOIN of its values
    "correlated count of s": "SELECT r.a, r.v FROM r WHERE r.v > (SELECT count(*) FROM s WHERE s.b = r.b)",
    "coalesce around a correlated max, grouped": ("SELECT r.a, count(*) AS n FROM r WHERE coalesce((SELECT max(s.w) "
                                                  "FROM s WHERE s.b = r.b), 4) >= r.v GROUP BY r.a"),
    # EXISTS over a join, correlated by equalities: EXISTS over a derived table of the values
    "exists over a join": ("SELECT r.a, r.v FROM r WHERE EXISTS (SELECT 1 FROM s JOIN t ON s.c = t.c "
                           "WHERE s.b = r.b AND t.d > 0)"),
    "not exists over a join, two keys, grouped": ("SELECT r.b, count(*) AS n, sum(r.v) AS total FROM r WHERE NOT EXISTS "
                                                  "(SELECT * FROM s, t WHERE s.c = t.c AND t.d = r.a AND s.b = r.b) "
                                                  "GROUP BY r.b"),
    "in (a join), correlated": ("SELECT r.a, r.v FROM r WHERE r.a + 1 IN (SELECT t.d + 1 FROM"
                                " s, t WHERE s.c = t.c AND s.b = r.b AND s.w > 0)"),
    "not in (a join), correlated": ("SELECT r.a, r.v FROM r WHERE r.b NOT IN (SELECT s.b FROM s JOIN t ON s.c = t.c "
                                    "WHERE t.d = r.a AND s.w > 1)"),
    "correlated over the view's own table": ("SELECT sum(r.v) AS total, count(*) AS n FROM r "
                                             "WHERE r.v < (SELECT avg(r2.v) + 1 FROM r r2 WHERE r2.b = r.b)"),
    # scalar subqueries in the SELECT list: every row reads a value, the value over no rows too
    "scalar subqueries in the select list": ("SELECT r.a, (SELECT count(*) FROM s WHERE s.b = r.b) AS n, "
                                             "(SELECT max(s.w) FROM s WHERE s.b = r.b AND s.c > 0) FROM r"),
    "uncorrelated, and coalesce over a join, in the select list": (
        "SELECT r.a, (SELECT avg(w) FROM s) AS mean, coalesce((SELECT sum(t.d) FROM s JOIN t ON s.c = t.c "
        "WHERE s.b = r.b), -1) + r.v AS joined FROM r WHERE r.a > 0"),
    "uncorrelated in the select list of a grouped query": ("SELECT r.b, count(*) * 10 - (SELECT count(*) FROM s) AS d, "
                                                           "sum(r.v) FROM r GROUP BY r.b"),
    # EXISTS read as a value (under OR, NOT, CASE, in the SELECT list; uncorrelated over a join): a
    # LEFT JOIN with the DISTINCT values of its correlated side, or a join with its count
    "exists under or": "SELECT r.a, r.v FROM r WHERE EXISTS (SELECT 1 FROM s WHERE s.b = r.b AND s.w > 2) OR r.a > 2",
    "exists over a join in the select list": ("SELECT r.a, r.b, EXISTS (SELECT 1 FROM s JOIN t ON s.c = t.c "
                                              "WHERE s.b = r.b) AS joined FROM r"),
    "not exists, uncorrelated, in the select list": "SELECT r.a, NOT EXISTS (SELECT 1 FROM t WHERE t.d > 2) AS none FROM r",
    "uncorrelated exists over a join": "SELECT r.a, r.v FROM r WHERE EXISTS (SELECT 1 FROM s JOIN t ON s.c = t.c WHERE t.d > 1)",
    "case over exists, two keys": ("SELECT r.a, r.v FROM r WHERE CASE WHEN EXISTS (SELECT 1 FROM s WHERE s.b = r.b "
                                   "AND s.c = r.a) THEN r.v > 3 ELSE r.v < 3 END"),
    # IN (subquery) read as a value, TRUE, FALSE or NULL: a LEFT JOIN with its DISTINCT non-NULL
    # values and one with their counts (all, and not NULL)
    "in under or, correlated": "SELECT r.a, r.v FROM r WHERE r.a IN (SELECT s.c FROM s WHERE s.b = r.b) OR r.v > 6",
    "not in, uncorrelated, under or": "SELECT r.a, r.v FROM r WHERE r.a NOT IN (SELECT t.d FROM t WHERE t.c > 0) OR r.b = 1",
    "in over a join in the select list": ("SELECT r.a, r.b, r.a IN (SELECT t.d FROM s JOIN t ON s.c = t.c "
                                          "WHERE s.b = r.b) AS hit FROM r"),
    "case over not in, uncorrelated": ("SELECT r.a, CASE WHEN r.b NOT IN (SELECT s.b FROM s WHERE s.w > 3) THEN 'out' "
                                       "WHEN r.b IN (SELECT s.b FROM s WHERE s.w > 3) THEN 'in' ELSE 'unknown' END AS k FROM r"),
    # an uncorrelated EXISTS whose subquery has an EXISTS or IN of its own (pg_ivm's tests): its count,
    # a derived table with a semi-join in its WHERE
    "exists inside an uncorrelated exists": ("SELECT r.a, r.v FROM r WHERE EXISTS (SELECT 1 FROM s WHERE s.w > 2 AND "
                                             "EXISTS (SELECT 1 FROM t WHERE t.c = s.c AND t.d > 0))"),
    "in inside an exists in the select list": ("SELECT r.a, EXISTS (SELECT 1 FROM s WHERE s.b IN (SELECT t.c FROM t "
                                               "WHERE t.d = 1)) AS e FROM r"),
    # nested: derived tables that read derived tables (TPC-H Q15's maximum of a WITH query's sums,
    # read twice; Q20's IN over a join with a correlated scalar subquery and an IN of its own)
    "the maximum of a with query's sums": ("WITH x AS (SELECT b, sum(w) AS total FROM s WHERE c > 0 GROUP BY b) "
                                           "SELECT r.a, x.total FROM r, x WHERE r.b = x.b AND x.total = "
                                           "(SELECT max(total) FROM x)"),
    "a count of counts of sums": ("SELECT y.n, count(*) AS groups FROM (SELECT x.total % 3 AS k, count(*) AS n FROM "
                                  "(SELECT b, sum(w) AS total FROM s GROUP BY b) x GROUP BY x.total % 3) y GROUP BY y.n"),
    "in (a join over a correlated sum, with an in)": (
        "SELECT r.a, r.v FROM r WHERE r.b IN (SELECT s.b FROM s, t WHERE s.c = t.c AND s.b IN (SELECT c FROM t WHERE d > 0) "
        "AND s.w > (SELECT sum(r2.v) / 4 FROM r r2 WHERE r2.b = s.b AND r2.a = t.d))"),
    "exists in a subquery that aggregates": ("SELECT r.a, x.n FROM r JOIN (SELECT s.b, count(*) AS n FROM s WHERE EXISTS "
                                             "(SELECT 1 FROM t WHERE t.c = s.c AND t.d >= 1) GROUP BY s.b) x ON x.b = r.b"),
}
SYSTEMS = ("fivm", "first-order", "recompute")


def _tables(conn: psycopg.Connection) -> None:
    conn.execute("CREATE TABLE r (a int, b int, v numeric); CREATE TABLE s (b int, c int, w int); CREATE TABLE t (c int, d int)")
    conn.execute("INSERT INTO r SELECT g % 4, g % 3, g FROM generate_series(1, 9) g; "
                 "INSERT INTO s SELECT g % 3, g % 4, g FROM generate_series(1, 8) g; "
                 "INSERT INTO t SELECT g % 4, g % 3 FROM generate_series(1, 7) g")


def _value(rng: random.Random) -> str:
    return "NULL" if rng.random() < 0.1 else str(rng.randrange(4))


def _statement(rng: random.Random) -> str:
    table = rng.choice("rsst")
    width = {"r": 3, "s": 3, "t": 2}[table]
    roll = rng.random()
    if roll < 0.45:  # duplicates and NULLs come with the small domain
        rows = ", ".join("(" + ", ".join(_value(rng) for _ in range(width)) + ")" for _ in range(rng.choice([1, 1, 3])))
        return f"INSERT INTO {table} VALUES {rows}"
    if roll < 0.7:  # often of a value no row has
        return f"DELETE FROM {table} WHERE {'abc'['rst'.index(table)]} = {rng.randrange(6)}"
    if roll < 0.95:  # join and GROUP BY columns
        column = rng.choice({"r": "ab", "s": "bc", "t": "cd"}[table])
        return (f"UPDATE {table} SET {column} = {_value(rng)} WHERE ctid IN "
                f"(SELECT ctid FROM {table} ORDER BY ctid LIMIT {rng.randint(1, 2)} OFFSET {rng.randrange(3)})")
    return f"TRUNCATE {table}"


def _differs(conn: psycopg.Connection, view: str, query: str) -> int:
    return conn.execute(f"SELECT count(*) FROM ((SELECT * FROM {view} EXCEPT ALL ({query})) "  # type: ignore[index]
                        f"UNION ALL (({query}) EXCEPT ALL SELECT * FROM {view})) d").fetchone()[0]


@pytest.mark.parametrize("label", list(QUERIES))
def test_derived_tables_after_every_statement(conn: psycopg.Connection, dsn: str, label: str) -> None:
    _tables(conn)
    query = QUERIES[label]
    views = []
    for system in SYSTEMS:
        name = f"v_{system.replace('-', '_')}"
        try:
            command.create(name, query, system=system, target=dsn)
        except PgivmError as err:  # F-IVM's shapes only (no semi- or anti-joins)
            assert system == "fivm" and "\n" not in err.message, err.message
            continue
        views.append(name)
    assert len(views) >= 2
    assert conn.execute("SELECT count(*) FROM pgivm_catalog.base_tables b WHERE b.table_oid = 'pgivm_v_first_order.derived_1'::regclass"
                        ).fetchone()[0] == 1  # type: ignore[index]
    rng = random.Random(label)
    seen = set()
    for step in range(60):
        statement = _statement(rng)
        if rng.random() < 0.1:  # a rolled-back statement leaves the view as it was
            with pytest.raises(psycopg.errors.QueryCanceled), conn.transaction():
                conn.execute(statement.replace("TRUNCATE", "DELETE FROM"))
                conn.execute("SELECT pg_cancel_backend(pg_backend_pid())")
        else:
            conn.execute(statement)
        seen.add(repr(sorted(conn.execute(query).fetchall(), key=repr)))
        for name in views:
            assert _differs(conn, name, query) == 0, (name, step, statement)
    assert len(seen) > 5  # the states checked differ
    for name in views:
        report = command.verify(name, target=dsn)
        assert report.ok, report.failures


@pytest.mark.parametrize("system", SYSTEMS)
def test_one_statement_that_takes_rows_from_two_of_its_tables(conn: psycopg.Connection, dsn: str, system: str) -> None:
    """A foreign key's cascade and a writable CTE take two rows of one joined row in one client
    statement: each table's trigger, joining its changed rows with the other table as it is now,
    found neither, and the group stayed (found by a fuzzer nobody on the project wrote)."""
    conn.execute("CREATE TABLE r (a int, b int PRIMARY KEY); "
                 "CREATE TABLE s (b int REFERENCES r (b) ON DELETE CASCADE ON UPDATE CASCADE, c int); CREATE TABLE t (b int); "
                 "INSERT INTO r VALUES (1, 1), (2, 2), (3, 3); INSERT INTO s VALUES (1, 1), (2, 2), (3, 3), (3, 4); "
                 "INSERT INTO t VALUES (1), (2), (3), (5)")
    query = "SELECT t.b, x.n FROM t JOIN (SELECT r.b, count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY r.b) x ON x.b = t.b"
    command.create("v", query, system=system, target=dsn)
    for statement in ["DELETE FROM r WHERE b = 1", "UPDATE r SET b = 5 WHERE b = 2",
                      "WITH d AS (DELETE FROM r WHERE b = 3) DELETE FROM s WHERE b = 3",
                      "INSERT INTO r VALUES (9, 9); INSERT INTO s VALUES (9, 1)"]:
        conn.execute(statement)
        assert _differs(conn, "v", query) == 0, statement
    assert conn.execute("SELECT * FROM v").fetchall() == [(5, 1)]
    assert command.verify("v", target=dsn).ok


def test_verify_names_a_derived_table_that_differs_from_its_subquery(conn: psycopg.Connection, dsn: str) -> None:
    _tables(conn)
    command.create("v", QUERIES["sum per group"], target=dsn)
    conn.execute("UPDATE pgivm_v.derived_1 SET total = total + 1 WHERE b = 1")
    report = command.verify("v", target=dsn)
    assert not report.ok and [f.check for f in report.failures] == ["derived_1_equals_its_subquery"], report.failures
    assert "2 rows differ" in str(report.failures[0])


def test_upgrade_and_drop(conn: psycopg.Connection, dsn: str) -> None:
    """upgrade makes the derived table's functions and triggers again from the catalog's model;
    drop leaves no trigger on any table and no state."""
    _tables(conn)
    query = QUERIES["self-join of three tables"]
    command.create("v", query, system="first-order", target=dsn)
    explained = command.explain("v", target=dsn)
    assert any(line.startswith("derived table pgivm_v.derived_1: a subquery that aggregates") and "public.s, public.t" in line
               for line in explained), explained
    assert command.upgrade("v", force=True, target=dsn).upgraded
    conn.execute("INSERT INTO s VALUES (1, 1, 5), (2, 1, 7); INSERT INTO t VALUES (1, 2); DELETE FROM s WHERE w = 3")
    assert _differs(conn, "v", query) == 0 and conn.execute("SELECT count(*) FROM v").fetchone()[0] > 0  # type: ignore[index]
    assert command.verify("v", target=dsn).ok
    command.drop("v", target=dsn)
    assert conn.execute("SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal").fetchone()[0] == 0  # type: ignore[index]
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgivm_v'").fetchone()[0] == 0  # type: ignore[index]


def test_a_partitioned_table_under_a_derived_table(conn: psycopg.Connection, dsn: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int) PARTITION BY RANGE (b); "
                 "CREATE TABLE s_low PARTITION OF s FOR VALUES FROM (MINVALUE) TO (2); "
                 "CREATE TABLE s_high PARTITION OF s FOR VALUES FROM (2) TO (MAXVALUE); "
                 "INSERT INTO r VALUES (1, 1), (2, 2), (3, 3); INSERT INTO s VALUES (1, 5), (2, 6), (3, 7)")
    query = "SELECT r.a, x.n FROM r JOIN (SELECT b, count(*) AS n FROM s GROUP BY b) x ON x.b = r.b"
    command.create("v", query, target=dsn)
    for statement in ["INSERT INTO s VALUES (1, 1), (3, 3)", "INSERT INTO s_high VALUES (2, 2)",
                      "UPDATE s SET b = 3 WHERE b = 1", "DELETE FROM s_high WHERE c = 6", "TRUNCATE s_low",
                      "INSERT INTO s VALUES (1, 9)", "TRUNCATE s"]:
        conn.execute(statement)
        assert _differs(conn, "v", query) == 0, statement
    assert command.verify("v", target=dsn).ok


def test_concurrent_writers(conn: psycopg.Connection, dsn: str) -> None:
    """Writers of the subquery's table and of the view's serialize on the view's lock: the result
    after both equals a recount."""
    _tables(conn)
    query = QUERIES["sum per group"]
    command.create("v", query, system="first-order", target=dsn)

    def write(seed: int) -> None:
        rng = random.Random(seed)
        with psycopg.connect(dsn, autocommit=True) as c:
            for _ in range(40):
                c.execute(_statement(rng).replace("TRUNCATE t", "DELETE FROM t"))

    threads = [threading.Thread(target=write, args=(seed,)) for seed in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert _differs(conn, "v", query) == 0
    assert command.verify("v", target=dsn).ok


@pytest.mark.parametrize(("sql", "words"), [
    ("SELECT r.a, x.n FROM r JOIN (SELECT b, count(*) AS n FROM s RIGHT JOIN t ON s.c = t.c GROUP BY b) x ON x.b = r.b",
     ["subquery x aggregates over a RIGHT, FULL, USING or NATURAL join"]),
    ("SELECT r.a, x.n FROM r JOIN (SELECT t.d, count(*) AS n FROM s LEFT JOIN t ON s.c = t.c GROUP BY t.d) x ON x.d = r.b",
     ["subquery x groups by a column of its LEFT JOIN's NULL-extended side"]),
    # correlated (PostgreSQL refuses it too, without LATERAL)
    ("SELECT r.a, x.n FROM r JOIN (SELECT b, count(*) AS n FROM s WHERE s.c = r.a GROUP BY b) x ON x.b = r.b",
     ["could not be resolved"]),
    # (over a subquery that only filters and renames: merged into it, accepted; one with LIMIT cannot be)
    ("SELECT r.a, x.n FROM r JOIN (SELECT b, count(*) AS n FROM (SELECT * FROM s LIMIT 3) q GROUP BY b) x ON x.b = r.b",
     ["subquery x aggregates over something other than tables"]),
    # an anti-join inside: a changed row of t would touch the groups it does not match
    ("SELECT r.a, x.n FROM r JOIN (SELECT b, count(*) AS n FROM s WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.c = s.c) "
     "GROUP BY b) x ON x.b = r.b", ["subquery x aggregates and holds a subquery of its own other than an IN or EXISTS"]),
    ("SELECT r.a, x.n FROM r JOIN (SELECT b, count(*) AS n FROM s WHERE s.c NOT IN (SELECT t.c FROM t) GROUP BY b) x "
     "ON x.b = r.b", ["other than an IN or EXISTS"]),
    ("SELECT r.a, x.n FROM r JOIN (SELECT b, sum(random()) AS n FROM s GROUP BY b) x ON x.b = r.b",
     ["subquery x calls rand"]),
    ("SELECT r.a, x.c FROM r JOIN (SELECT DISTINCT ON (b) b, c FROM s) x ON x.b = r.b", ["DISTINCT ON"]),
    ("SELECT r.a, x.n FROM r JOIN (SELECT b, count(*) AS n, count(*) AS n FROM s GROUP BY b) x ON x.b = r.b",
     ["subquery x has two columns named n"]),
    # scalar subqueries: count is 0 over no rows (a join would drop the row), correlation by <, under OR
    ("SELECT r.a FROM r WHERE r.v > (SELECT stddev(w) FROM s WHERE s.b = r.b)", ["is correlated and calls STDDEV",
                                                                                 "value over no rows"]),
    ("SELECT r.a FROM r WHERE r.v > (SELECT max(w) FROM s WHERE s.b < r.b)", ["other than by an equality", "s.b < r.b"]),
    ("SELECT r.a FROM r WHERE r.a = 1 OR r.v > (SELECT max(w) FROM s)", ["a subquery is maintained only as"]),
    ("SELECT r.b FROM r GROUP BY r.b HAVING sum(r.v) > (SELECT max(w) FROM s WHERE s.b = r.b)", ["in HAVING reads the query"]),
    ("SELECT r.b, count(*) - (SELECT count(*) FROM s WHERE s.b = r.b) FROM r GROUP BY r.b",
     ["a subquery in the SELECT list is maintained when", "uncorrelated, with GROUP BY"]),
    # an inner subquery that reads the outermost query
    ("SELECT r.a FROM r WHERE EXISTS (SELECT 1 FROM s WHERE EXISTS (SELECT 1 FROM t WHERE t.c = r.b))",
     ["a subquery inside a subquery is not supported"]),
    # a NOT EXISTS inside: named as written (not as the derived table it would have been)
    ("SELECT r.a FROM r WHERE EXISTS (SELECT 1 FROM s WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.c = s.c))",
     ["NOT EXISTS(SELECT 1 FROM t WHERE t.c = s.c)", "not supported"]),
    # EXISTS over a join correlated otherwise than by equalities of its WHERE: left to the semi-join rules
    ("SELECT r.a FROM r WHERE EXISTS (SELECT 1 FROM s JOIN t ON s.c = t.c WHERE s.b < r.b)", ["not one with joins"]),
    ("SELECT r.a FROM r WHERE EXISTS (SELECT 1 FROM s JOIN t ON s.c = t.c AND t.d = r.a)", ["not one with joins"]),
    ("SELECT r.a FROM r WHERE r.b NOT IN (SELECT s.b FROM s JOIN t ON s.c = t.c WHERE t.d < r.a)", ["not one with joins"]),
    # PostgreSQL's own refusal (s is not visible in that ON), in one line (was its raw error: a fuzzer)
    ("SELECT r.a FROM r WHERE r.a IN (SELECT DISTINCT t.d FROM s, t JOIN s s2 ON s2.b = s.c WHERE t.c = s.b)",
     ["PostgreSQL rejects the view SQL: invalid reference to FROM-clause entry for table"]),
])
def test_what_is_not_kept_is_refused_in_one_line(conn: psycopg.Connection, dsn: str, sql: str, words: list[str]) -> None:
    _tables(conn)
    with pytest.raises(PgivmError) as info:
        command.create("v", sql, target=dsn)
    assert "\n" not in info.value.message and all(w in info.value.message for w in words), info.value.message
    assert len(info.value.message) < 200, info.value.message
    assert conn.execute("SELECT count(*) FROM pgivm_catalog.views").fetchone()[0] == 0  # type: ignore[index]
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgivm_v'").fetchone()[0] == 0  # type: ignore[index]


def test_a_column_named_as_pgivms_own_beside_it_is_refused_in_one_line(conn: psycopg.Connection, dsn: str) -> None:
    """The rows a statement took from a table a derived table reads are kept with columns xid and
    at beside the table's: a column of that name was PostgreSQL's raw 'column already exists'."""
    conn.execute("CREATE TABLE ev (at date, n int)")
    with pytest.raises(PgivmError) as info:
        command.create("v", "SELECT x.n FROM (SELECT ev.at, count(*) AS n FROM ev GROUP BY ev.at) AS x", target=dsn)
    assert "column at of ev" in info.value.message and "\n" not in info.value.message
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgivm_v'").fetchone()[0] == 0  # type: ignore[index]


@pytest.mark.parametrize("system", ["fivm", "ivme"])
def test_a_refused_scalar_subquery_is_named_as_written(conn: psycopg.Connection, dsn: str, system: str) -> None:
    """Not as the derived table it is joined as (``"scalar_1"."pgivm_value"``: pgivm's names)."""
    _tables(conn)
    for query, subquery in [
        ("SELECT r.b, sum(r.v) FROM r WHERE r.v > (SELECT avg(w) FROM s WHERE c > 0) GROUP BY r.b",
         '(SELECT AVG("s"."w") FROM "s" AS "s" WHERE "s"."c" > 0)'),
        ("SELECT r.b, sum(r.v) FROM r WHERE r.v > 2 * (SELECT avg(w) FROM s WHERE s.b = r.b) GROUP BY r.b",
         '2 * (SELECT AVG("s"."w") FROM "s" AS "s" GROUP BY "s"."b")')]:
        with pytest.raises(PgivmError) as info:
            command.create("v", query, system=system, target=dsn)
        assert info.value.message == (f"system {system} cannot maintain this query: condition r.v > {subquery} compares "
                                      "a value with a scalar subquery's: only first-order, recompute and sample "
                                      "evaluate such conditions on the join result"), info.value.message
    with pytest.raises(PgivmError) as info:  # read through a LEFT JOIN (its count is 0 over no rows)
        command.create("v", "SELECT r.b, sum(r.v) FROM r WHERE r.v > (SELECT count(*) FROM s WHERE s.b = r.b) GROUP BY r.b",
                       system=system, target=dsn)
    assert info.value.message == (f"system {system} cannot maintain this query: correlated scalar subquery (SELECT "
                                  'COUNT(*) FROM "s" AS "s" GROUP BY "s"."b") has a value over no rows (a count\'s 0, or '
                                  "a coalesce): it is read through a LEFT JOIN, which first-order and recompute maintain")


@pytest.mark.parametrize("system", ["recompute", "first-order"])
def test_a_query_postgresql_refuses_is_refused_in_one_line(conn: psycopg.Connection, dsn: str, system: str) -> None:
    """x = y of an integer and a text: recompute ran SQL of its own made of it first, whose raw
    error was the refusal (found by a fuzzer); PostgreSQL's verdict on the query comes first now."""
    _tables(conn)
    with pytest.raises(PgivmError) as info:
        command.create("v", "SELECT x.c0, y.n1 FROM (SELECT DISTINCT r.a AS k FROM r) AS x(c0) JOIN "
                            "(SELECT max(s.c)::text AS n1 FROM s) AS y ON x.c0 = y.n1", system=system, target=dsn)
    assert info.value.message == "PostgreSQL rejects the view SQL: operator does not exist: integer = text"


@pytest.mark.parametrize("system", ["first-order", "fivm"])
def test_deferred_views_over_derived_tables(conn: psycopg.Connection, dsn: str, system: str) -> None:
    """A deferred view logs the derived table's changes as any base table's, and reads the live
    table less what is pending: a read after any number of statements equals PostgreSQL's; writers,
    which take no lock of a deferred view's, recount one at a time (two concurrent ones, each
    blind to the other's rows, lost the first one's change: the second's recount did not see it,
    and its write found the first's row)."""
    _tables(conn)
    query = QUERIES["self-join of three tables"]
    command.create("v", query, system=system, refresh="deferred", budget=10**9, target=dsn)
    rng = random.Random(system)
    for step in range(40):
        conn.execute(_statement(rng))
        if rng.random() < 0.3:  # a read applies what is pending first
            assert _differs(conn, "v", query) == 0, step

    def write_second() -> None:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("INSERT INTO s VALUES (1, 1, 9)")

    # two writers of one group: the second starts while the first has not committed
    with psycopg.connect(dsn) as first:
        first.execute("INSERT INTO s VALUES (1, 1, 7), (1, 2, 8)")
        second = threading.Thread(target=write_second)
        second.start()
        second.join(0.5)
        first.commit()
    second.join()
    assert _differs(conn, "v", query) == 0
    assert command.verify("v", target=dsn).ok
    command.alter_refresh("v", refresh="immediate", target=dsn)
    conn.execute("DELETE FROM s WHERE w > 4")
    assert _differs(conn, "v", query) == 0


_ROWS_READ = """
    SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(c.oid) + pg_stat_get_xact_tuples_fetched(c.oid)), 0)
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'i') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
"""


def _rows_read_by(conn: psycopg.Connection, statement: str) -> int:
    """The rows one statement reads: the counters' difference inside one transaction (no stats flush
    inside a transaction block)."""
    with conn.transaction():
        before = conn.execute(_ROWS_READ).fetchone()[0]  # type: ignore[index]
        conn.execute(statement)
        return int(conn.execute(_ROWS_READ).fetchone()[0] - before)  # type: ignore[index]


def _rows_read_at_two_sizes(conn: psycopg.Connection, query: str, table: str, columns: str,
                            writes: list[str]) -> list[int]:
    """The rows each of ``writes`` reads with ``table`` refilled by ``SELECT columns FROM
    generate_series(1, N) g`` for N of 20,000 then 40,000 (``{groups}``: N / 100, groups of 100
    rows), the view compared with the query after each size."""
    read = []
    for rows in (20_000, 40_000):
        conn.execute(f"TRUNCATE {table}")
        conn.execute(f"INSERT INTO {table} SELECT {columns.format(groups=rows // 100)} FROM generate_series(1, {rows}) g")
        conn.execute("ANALYZE")  # every table, the view's state too: plans that autovacuum's timing does not change
        read += [_rows_read_by(conn, write) for write in writes]
        assert _differs(conn, "v", query) == 0
    return read


def test_a_write_reads_its_groups_rows_not_the_table(conn: psycopg.Connection, dsn: str) -> None:
    """With an index on the GROUP BY column, a single-row write recounts its group (100 rows here)
    through the index: the rows a statement reads stay far below the table's 20,000, and do not
    grow with it (the same write over 40,000 rows reads as many)."""
    query = "SELECT r.a, x.n, x.top FROM r JOIN (SELECT b, count(*) AS n, max(c) AS top FROM s GROUP BY b) x ON x.b = r.b"
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE INDEX ON s (b); CREATE INDEX ON r (b)")
    conn.execute("INSERT INTO r SELECT g, g FROM generate_series(1, 200) g")
    command.create("v", query, system="first-order", target=dsn)
    # the second write: plans cached, as a running application's writes are
    read = _rows_read_at_two_sizes(conn, query, "s", "g % {groups}, g", ["INSERT INTO s VALUES (7, -1)"] * 2)
    print("rows read per single-row write, 20,000 then 40,000 rows:", read)
    assert read[1] < 2_000 and read[3] < 2_000, read
    assert read[3] < 1.5 * read[1], read


def test_a_write_under_a_correlated_scalar_subquery_reads_its_group(conn: psycopg.Connection, dsn: str) -> None:
    """r's rows above their group's average (TPC-H Q17's shape): a write recounts its group's
    average and compares that group's rows again (100 here), through the indexes on r.b and on the
    derived table's shown key; the result, keyed by two columns that join nothing, is merged by
    pattern of NULLs (matched by "= OR both NULL" on each, PostgreSQL read it by its first column:
    about half the result a write). The rows read stay far below the table's and do not grow with it."""
    query = "SELECT s.c, r.a FROM r JOIN s ON r.b = s.b WHERE r.a > (SELECT avg(r2.a) FROM r AS r2 WHERE r2.b = r.b)"
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE INDEX ON r (b); CREATE INDEX ON s (b)")
    conn.execute("INSERT INTO s SELECT g, g % 10 FROM generate_series(0, 399) g")
    command.create("v", query, system="first-order", target=dsn)
    # one below its group's average, one above (the average moves); the second with plans cached
    read = _rows_read_at_two_sizes(conn, query, "r", "(g * 7919) % 1000, g % {groups}",
                                   ["INSERT INTO r VALUES (-1, 7)", "INSERT INTO r VALUES (5000, 7)"])
    print("rows read per single-row write, 20,000 then 40,000 rows:", read)
    # measured: 722 and 722 (with the merge by "= OR both NULL": 1,360 and 1,678, growing with r)
    assert read[1] < 1_000 and read[3] < 1.1 * read[1], read


def test_a_write_under_an_exists_over_a_join_reads_its_values(conn: psycopg.Connection, dsn: str) -> None:
    """r's rows whose b some joined row of s and t has: a write into s recounts the values of its
    keys (its b's joined rows through the indexes on s.b and t.c), then tests r's rows of those
    values through r's index. The rows read stay far below the tables' and do not grow with s."""
    query = "SELECT r.a, r.b FROM r WHERE EXISTS (SELECT 1 FROM s JOIN t ON s.c = t.c WHERE s.b = r.b AND t.d > 0)"
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, d int); "
                 "CREATE INDEX ON r (b); CREATE INDEX ON s (b); CREATE INDEX ON t (c)")
    conn.execute("INSERT INTO r SELECT g % 1000, g % 400 FROM generate_series(1, 4000) g; "
                 "INSERT INTO t SELECT g, g % 7 FROM generate_series(0, 99) g; ANALYZE r, t")
    command.create("v", query, system="first-order", target=dsn)
    read = _rows_read_at_two_sizes(conn, query, "s", "g % {groups}, g % 100",
                                   ["INSERT INTO s VALUES (17, 5), (23, 6)", "DELETE FROM s WHERE b = 31"])
    print("rows read per write, s of 20,000 then 40,000 rows:", read)
    # measured: 674, 606 then 674, 716 (the same rows but for the plans, which differ a little with s's size)
    assert max(read) < 1_500 and read[2] + read[3] < 1.3 * (read[0] + read[1]), read  # doubling s doubles nothing


def test_a_write_under_nested_derived_tables_reads_its_groups(conn: psycopg.Connection, dsn: str) -> None:
    """Each b's largest per-(b, c) sum: a write into s recounts its (b, c) group of the inner derived
    table through s's index, then the outer group of that b through the inner table's index on its
    shown keys (b, c). The rows read stay far below s's and do not grow with it."""
    query = ("SELECT r.a, y.top FROM r JOIN (SELECT x.b, max(x.total) AS top FROM (SELECT b, c, sum(c) AS total FROM s "
             "GROUP BY b, c) x GROUP BY x.b) y ON y.b = r.b")
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE INDEX ON s (b, c); CREATE INDEX ON r (b)")
    conn.execute("INSERT INTO r SELECT g, g FROM generate_series(1, 400) g")
    command.create("v", query, system="first-order", target=dsn)
    read = _rows_read_at_two_sizes(conn, query, "s", "g % {groups}, g % 7", ["INSERT INTO s VALUES (7, 3)"] * 2)
    print("rows read per single-row write, s of 20,000 then 40,000 rows:", read)
    assert read[1] < 1_000 and read[3] < 1.2 * read[1], read


def test_validate_spark_says_what_it_does_not_check(conn: psycopg.Connection, dsn: str) -> None:
    """Spark would read the derived table as a base table and not check it: refused in one line
    before any JVM starts, pointing at verify."""
    from pgivm.spark.commands import validate_spark

    _tables(conn)
    command.create("v", QUERIES["sum per group"], target=dsn)
    with pytest.raises(PgivmError, match="reads a subquery that aggregates") as info:
        validate_spark("v", target=dsn)
    assert "pgivm verify v" in (info.value.hint or "")


def test_the_functions_and_names_conditions_take_are_taken_inside() -> None:
    """Each function conditions may call, as sqlglot names it (strpos is its StrPosition, ltrim its
    Trim, ...), and a column named with its schema and table (sch.q.c): all refused inside a
    subquery that aggregates until a fuzzer tried them."""
    from pgivm.query import scalar
    from pgivm.query.parse import parse_query

    arguments = {"mod": "q.d, 2", "power": "q.d, 2", "substr": "q.t, 1, 2", "left": "q.t, 1", "right": "q.t, 1",
                 "replace": "q.t, 'a', 'b'", "strpos": "q.t, 'a'", "starts_with": "q.t, 'a'", "coalesce": "q.d, 1",
                 "nullif": "q.d, 1", "greatest": "q.d, 1", "least": "q.d, 1", "date_part": "'year', DATE '2020-01-01'",
                 "date_trunc": "'month', TIMESTAMP '2020-01-01'", "timezone": "'UTC', TIMESTAMPTZ '2020-01-01'",
                 "split_part": "q.t, '-', 2", "repeat": "q.t, 2", "lpad": "q.t, 3", "rpad": "q.t, 3, '*'",
                 "translate": "q.t, 'a', 'b'", "regexp_replace": "q.t, 'a', 'b'", "array_length": "'{1,2}'::int[], 1",
                 "cardinality": "'{1,2}'::int[]", "make_date": "q.d, 1, 1", "age": "TIMESTAMP '2020-01-01', TIMESTAMP '2019-01-01'",
                 "justify_days": "INTERVAL '40 days'", "justify_hours": "INTERVAL '30 hours'",
                 "justify_interval": "INTERVAL '40 days'"}
    of_text = {"lower", "upper", "length", "char_length", "btrim", "ltrim", "rtrim", "initcap", "reverse", "md5",
               "octet_length"}
    for function in sorted(scalar.FUNCTIONS):
        text = f"{function}({arguments.get(function, 'q.t' if function in of_text else 'q.d')})"
        query = parse_query(f"SELECT x.c, x.m FROM (SELECT sch.q.c, max({text}) AS m FROM sch.q GROUP BY sch.q.c) x",
                            lambda table: ["c", "d", "t"], static_schema="pgivm_v")
        assert [s.table for s in query.derived[0].sources] == [TableRef("q", "sch")], function


def test_a_quoted_upper_case_table_beside_a_subquery(conn: psycopg.Connection, dsn: str) -> None:
    """sqlglot's qualify lost "R" read without an alias: every view with a subquery in FROM beside
    it was refused ("Column 'a' could not be resolved"; found by a fuzzer)."""
    conn.execute('CREATE TABLE "R" (a int, b int); CREATE TABLE s (b int, c int); '
                 'INSERT INTO "R" VALUES (1, 1), (2, 2); INSERT INTO s VALUES (1, 5), (1, 6), (2, 7)')
    queries = ['SELECT "R".a, x.n FROM "R" JOIN (SELECT b, count(*) AS n FROM s GROUP BY b) x ON x.b = "R".b',
               'SELECT "R".a, x.c FROM "R" JOIN (SELECT b, c FROM s WHERE c > 5) x ON x.b = "R".b']
    for i, query in enumerate(queries):
        command.create(f"v{i}", query, target=dsn)
    for statement in ['INSERT INTO s VALUES (2, 9)', 'DELETE FROM s WHERE c = 5', 'UPDATE "R" SET b = 1 WHERE a = 2']:
        conn.execute(statement)
        for i, query in enumerate(queries):
            assert _differs(conn, f"v{i}", query) == 0, (query, statement)


GENERATED_NAMES = [
    # columns named as the rewrites' own (pgivm_c1, pgivm_value, pgivm_n, pgivm_k1, exists_1), floats
    # from 1e-300 to 1e300 (a sum that cancels), NULL keys
    ("SELECT g1.pgivm_n, EXISTS (SELECT 1 FROM g2 WHERE g2.pgivm_c1 = g1.pgivm_c1) AS exists_1, "
     "(SELECT max(g2.pgivm_k1) FROM g2 WHERE g2.pgivm_c1 = g1.pgivm_c1) AS pgivm_value FROM g1"),
    ("SELECT y.pgivm_c1, y.pgivm_value FROM (SELECT x.pgivm_c1, max(x.pgivm_value) AS pgivm_value FROM (SELECT pgivm_c1, "
     "pgivm_n, sum(pgivm_value) AS pgivm_value FROM g1 GROUP BY pgivm_c1, pgivm_n) x GROUP BY x.pgivm_c1) y"),
    ("SELECT g1.pgivm_n FROM g1 WHERE g1.pgivm_n NOT IN (SELECT g2.pgivm_c1 FROM g2 JOIN g1 AS g3 "
     "ON g3.pgivm_c1 = g2.pgivm_c1 WHERE g3.pgivm_n = g1.pgivm_c1)"),
]


@pytest.mark.parametrize("query", GENERATED_NAMES)
def test_the_new_rewrites_over_columns_named_as_their_own_and_floats_far_apart(conn: psycopg.Connection, dsn: str,
                                                                              query: str) -> None:
    conn.execute('CREATE TABLE g1 ("pgivm_c1" int, "pgivm_value" float8, "pgivm_n" int); '
                 'CREATE TABLE g2 ("pgivm_c1" int, "pgivm_k1" float8); '
                 "INSERT INTO g1 VALUES (1, 1e-300, 2), (1, 1e300, 3), (2, NULL, 1); INSERT INTO g2 VALUES (1, 5), (NULL, 1e-200)")
    command.create("v", query, target=dsn)
    seen = set()
    for statement in ["INSERT INTO g1 VALUES (1, -1e300, 2), (NULL, 7, 1)", "DELETE FROM g2 WHERE pgivm_c1 IS NULL",
                      "INSERT INTO g2 VALUES (2, 1e-300), (3, -1e300)", "UPDATE g1 SET pgivm_c1 = 3 WHERE pgivm_n = 1",
                      "UPDATE g1 SET pgivm_value = pgivm_value * 1e-10 WHERE pgivm_c1 = 1", "DELETE FROM g1 WHERE pgivm_n = 2",
                      "TRUNCATE g2", "INSERT INTO g2 VALUES (NULL, 1), (1, 1e300)"]:
        conn.execute(statement)
        assert _differs(conn, "v", query) == 0, statement
        seen.add(repr(sorted(conn.execute(query).fetchall(), key=repr)))
    assert len(seen) >= 3  # the states checked differ
    assert command.verify("v", target=dsn).ok


@pytest.mark.parametrize("system", ["recompute", "first-order"])
def test_a_division_by_a_subquerys_count_after_the_table_was_empty(conn: psycopg.Connection, dsn: str,
                                                                   system: str) -> None:
    """A share of the whole (held-out review): recompute refreshed the view before the subquery's
    count was recounted, divided by the count of before the statement (0 after the table had been
    emptied) and every insert failed; its refresh now fires after the derived table's triggers."""
    conn.execute("CREATE TABLE orders (o_id int, o_status text); INSERT INTO orders VALUES (1, 'O'), (2, 'F')")
    query = "SELECT o_status, count(*) * 100.0 / (SELECT count(*) FROM orders) AS pct FROM orders GROUP BY o_status"
    command.create("v", query, system=system, target=dsn)
    for statement in ["TRUNCATE orders", "INSERT INTO orders VALUES (3, 'O')", "INSERT INTO orders VALUES (4, 'F'), (5, 'F')",
                      "DELETE FROM orders", "INSERT INTO orders VALUES (6, 'O')", "UPDATE orders SET o_status = 'X'"]:
        conn.execute(statement)
        assert _differs(conn, "v", query) == 0, statement
    assert conn.execute("SELECT * FROM v").fetchall() == [("X", 100)]
    assert command.verify("v", target=dsn).ok

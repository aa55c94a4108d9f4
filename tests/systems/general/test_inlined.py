"""WITH queries and subqueries in FROM that join, filter and rename (issue 22): inlined into the
view's query (their columns read from the database), maintained by fivm, first-order and recompute,
after every statement against PostgreSQL's evaluation of the SQL as written; the view's columns are
named as PostgreSQL names them. WITH RECURSIVE and ones that aggregate are refused in one line.
"""

from __future__ import annotations

import random

import psycopg
import pytest

from pgivm import command
from pgivm.errors import PgivmError

QUERIES = {
    "with": ("WITH big AS (SELECT a, b FROM r WHERE a > 1), cs AS (SELECT s.b, s.c FROM s WHERE s.c <> 2) "
             "SELECT big.b, count(*), sum(big.a) FROM big JOIN cs ON big.b = cs.b GROUP BY big.b"),
    "subquery": ("SELECT q.a, q.c FROM (SELECT r.a, s.c FROM r JOIN s ON r.b = s.b WHERE s.c < 3) AS q "
                 "WHERE q.a <> 2"),
    "renamed": "SELECT sum(x.v) AS total, count(*) FROM (SELECT r.a + 1.5 AS v, r.b AS k FROM r) x JOIN s ON x.k = s.b",
    # a WITH query read twice: a self-join through it (pg_ivm's suite)
    "with read twice": "WITH t AS (SELECT * FROM r WHERE a > 0) SELECT t1.a, t2.b AS b2 FROM t AS t1 JOIN t AS t2 ON t1.b = t2.a",
    # a WITH query that names its columns (they were lost: "Unknown column", found by a fuzzer)
    "with column names": "WITH q(x, y) AS (SELECT a, b FROM r) SELECT q.x, s.c FROM q JOIN s ON q.y = s.b",
    # LATERAL that joins and filters, correlated by equalities: a subquery joined on them
    "lateral": "SELECT r.a, x.c FROM r, LATERAL (SELECT s.c FROM s WHERE s.b = r.b AND s.c > 0) AS x",
    "cross join lateral, grouped": ("SELECT x.c, count(*), sum(r.a) FROM r CROSS JOIN LATERAL (SELECT s.c FROM s "
                                    "WHERE r.a = s.c) AS x GROUP BY x.c"),
    # a WITH of the subquery's own (pg_ivm's suite): its name is no table to look up
    "nested with": ("WITH q AS (SELECT * FROM s) SELECT v.a, v.c FROM (WITH p AS (SELECT * FROM r) "
                    "SELECT p.a, q.c FROM p, q WHERE p.b = q.b) v"),
}


def _write(conn: psycopg.Connection, rng: random.Random) -> None:
    table = rng.choice(["r", "s"])
    if rng.random() < 0.7:
        conn.execute(f"INSERT INTO {table} VALUES (%s, %s)", [rng.randint(0, 4), rng.randint(0, 3)])
    else:
        conn.execute(f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} ORDER BY random() LIMIT 2)")


@pytest.mark.parametrize("label", list(QUERIES))
def test_inlined_queries_after_every_statement(conn: psycopg.Connection, dsn: str, label: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    conn.execute("SELECT setseed(0.25)")  # ORDER BY random() in the writes: the same stream each run
    rng = random.Random(label)
    for _ in range(25):
        _write(conn, rng)
    query = QUERIES[label]
    for system in ("fivm", "first-order", "recompute"):
        command.create(f"v_{system.replace('-', '_')}", query, system=system, target=dsn)
    names = [d.name for d in conn.execute(f"{query} LIMIT 0").description]
    seen = set()
    for step in range(40):
        _write(conn, rng)
        expected = sorted(conn.execute(query).fetchall(), key=repr)
        seen.add(repr(expected))
        for system in ("fivm", "first_order", "recompute"):
            cur = conn.execute(f"SELECT * FROM v_{system}")
            assert [d.name for d in cur.description] == names
            assert sorted(cur.fetchall(), key=repr) == expected, (system, step)
    assert len(seen) > 3
    for system in ("fivm", "first_order", "recompute"):
        assert command.verify(f"v_{system}", target=dsn).ok


@pytest.mark.parametrize(("sql", "words"), [
    ("WITH RECURSIVE t AS (SELECT a FROM r) SELECT count(*) FROM t", ["WITH RECURSIVE"]),
    ("WITH d AS (DELETE FROM s RETURNING b) SELECT r.a FROM r", ["WITH d AS (DELETE ...) writes: a view only reads"]),
    ("WITH t AS (SELECT b, count(*) AS n FROM s GROUP BY b LIMIT 2) SELECT r.a, t.n FROM r JOIN t ON r.b = t.b",
     ["subquery t aggregates: not supported yet"]),
    ("SELECT r.a, x.n FROM r, LATERAL (SELECT count(*) AS n FROM s WHERE s.b = r.b) AS x",
     ["LATERAL subquery x aggregates", "LATERAL is maintained when"]),
    ("SELECT r.a, x.c FROM r, LATERAL (SELECT s.c FROM s WHERE s.b < r.b) AS x",
     ["LATERAL subquery x reads the tables before it", "correlated by equalities"]),
    # each names the subquery and what keeps it from being merged
    ("SELECT r.a, x.b FROM r JOIN (SELECT b FROM s LIMIT 3) AS x ON r.a = x.b", ["subquery x uses LIMIT"]),
    ("SELECT r.a, x.b FROM r JOIN (SELECT b FROM s UNION SELECT a FROM r) AS x ON r.a = x.b", ["subquery x is a UNION"]),
    ("SELECT * FROM (SELECT a, b FROM r FOR UPDATE) AS tmp", ["subquery tmp locks rows (FOR UPDATE/SHARE)"]),  # pg_ivm's tests
    # an output that is not NULL on a NULL-extended row (merged, 42 or coalesce(...) was computed there,
    # where PostgreSQL gives NULL: a wrong result, found by the differential fuzzer)
    ("SELECT r.a, x.k FROM r LEFT JOIN (SELECT s.b, 42 AS k FROM s) AS x ON x.b = r.b", ["subquery x computes k (42)"]),
    # USING beside an aliased join whose columns repeat a name (was sqlglot's "Cannot automatically join: a")
    ("SELECT r0.b, p4.c FROM r AS r0 JOIN (r JOIN (s JOIN s AS s2 ON s.c = s2.c) AS p3 ON p3.b = r.a) AS p4 USING (a)",
     ["JOIN ... USING (a) beside a subquery or aliased join", "write the join as ON"]),
    # SELECT * over a subquery with two columns of one name: sqlglot cannot expand it (was "'a'")
    ("SELECT p.a FROM s JOIN (SELECT * FROM s AS s2 JOIN (SELECT r.a, r.b, s.b FROM r JOIN s ON r.b = s.b) AS q "
     "ON q.a = s2.c) AS p ON p.a = s.b", ["subquery q has two columns named b"]),
    ("SELECT r.a, x.k FROM (SELECT s.b, coalesce(s.c, 0) AS k FROM s) AS x RIGHT JOIN r ON x.b = r.b",
     ["subquery x computes k (COALESCE(s.c, 0)) where an outer join NULL-extends it"]),
    ("SELECT r.a, x.k FROM r JOIN (SELECT s.b, 42 AS k FROM s JOIN r AS r2 ON r2.a = s.c) AS x ON x.b = r.b "
     "FULL JOIN s AS s3 ON s3.c = r.a", ["subquery x computes k (42)"]),
    # x's WHERE would drop rows FULL JOIN keeps, in WHERE and in ON alike
    ("SELECT r.a, x.c FROM r FULL JOIN (SELECT b, c FROM s WHERE c > 0) AS x ON x.b = r.b",
     ["x filters (WHERE)", "cannot be kept exactly"]),
    # (x LEFT JOIN s ON ...) keeps x's rows: x's WHERE cannot go into that ON (before an inner join it does)
    ("SELECT r.a, x.c FROM r LEFT JOIN ((SELECT b, c FROM s WHERE c > 0) AS x LEFT JOIN s ON x.b = s.b) ON x.c = r.a",
     ["x filters (WHERE) first in a parenthesized join"]),
])
def test_what_is_not_inlined_is_refused_in_one_line(conn: psycopg.Connection, dsn: str, sql: str, words: list[str]) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    conn.execute("SELECT setseed(0.25)")  # ORDER BY random() in the writes: the same stream each run
    with pytest.raises(PgivmError) as info:
        command.create("v", sql, target=dsn)
    assert "\n" not in str(info.value) and all(w in str(info.value) for w in words), str(info.value)
    assert len(info.value.message) < 200, info.value.message


def test_plain_views_in_from_are_expanded_to_their_tables(conn: psycopg.Connection, dsn: str) -> None:
    """A plain view in FROM (and a view over a view) is inlined from its definition: the maintained
    view's base tables are the tables under it, so their writes reach it; one that aggregates is
    kept as a derived table (test_derived.py) over its own tables."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    conn.execute("SELECT setseed(0.25)")
    conn.execute("CREATE VIEW big_r AS SELECT a AS x, b FROM r WHERE a > 1")
    conn.execute("CREATE VIEW big_r_pos AS SELECT * FROM big_r WHERE x < 4")
    query = "SELECT s.c, count(*) AS n, sum(v.x) AS sx FROM big_r_pos v JOIN s ON v.b = s.b GROUP BY s.c"
    rng = random.Random("views")
    for _ in range(25):
        _write(conn, rng)
    for system in ("fivm", "first-order"):
        command.create(f"v_{system.replace('-', '_')}", query, system=system, target=dsn)
    tables = {t for (t,) in conn.execute("SELECT DISTINCT table_oid::regclass::text FROM pgivm_catalog.base_tables")}
    assert tables == {"r", "s"}
    seen = set()
    for step in range(30):
        _write(conn, rng)
        expected = sorted(conn.execute(query).fetchall(), key=repr)
        seen.add(repr(expected))
        for system in ("fivm", "first_order"):
            assert sorted(conn.execute(f"SELECT * FROM v_{system}").fetchall(), key=repr) == expected, (system, step)
    assert len(seen) > 3
    conn.execute("CREATE VIEW per_b AS SELECT b, count(*) AS n FROM r GROUP BY b")
    command.create("over_per_b", "SELECT s.c, p.n FROM per_b p JOIN s ON p.b = s.b", target=dsn)
    for step in range(10):
        _write(conn, rng)
        expected = sorted(conn.execute("SELECT s.c, p.n FROM per_b p JOIN s ON p.b = s.b").fetchall(), key=repr)
        assert sorted(conn.execute("SELECT * FROM over_per_b").fetchall(), key=repr) == expected, step


JOINED = {
    # its WHERE stays with the join inside the parentheses: r's rows without a match stay, NULL-extended
    "subquery in a parenthesized join": ("SELECT r.a, x.c FROM r LEFT JOIN (s JOIN (SELECT c, d FROM t WHERE d > 0) "
                                         "AS x ON x.c = s.c) ON s.b = r.a"),
    "with in a parenthesized join": ("WITH x AS (SELECT c, d FROM t WHERE d > 0) "
                                     "SELECT r.a, x.c FROM r LEFT JOIN (s JOIN x ON x.c = s.c) ON s.b = r.a"),
    "view in a parenthesized join": "SELECT r.a, x.c FROM r LEFT JOIN (s JOIN pos_t AS x ON x.c = s.c) ON s.b = r.a",
    "view over a view in a parenthesized join": ("SELECT r.a, x.d FROM r LEFT JOIN (s LEFT JOIN pos_small_t AS x "
                                                 "ON x.c = s.c) ON s.b = r.a"),
    "subquery on the right of a left join": ("SELECT r.a, x.c FROM r LEFT JOIN (SELECT c FROM t WHERE d > 0) AS x "
                                             "ON x.c = r.b"),
    "subquery before a right join": ("SELECT r.a, x.c FROM (SELECT c, d FROM t WHERE d > 0) AS x RIGHT JOIN r "
                                     "ON x.c = r.b"),
    "subquery under a full join": ("SELECT r.a, x.c FROM r FULL JOIN (s JOIN (SELECT c, d FROM t WHERE d <> 1) AS x "
                                   "ON x.c = s.c) ON s.b = r.a"),
    # pg_get_viewdef writes a view's join in parentheses: FROM (r JOIN t ON ...)
    "view of a join": "SELECT v.a, v.d FROM r_t AS v",
    "subquery from a parenthesized join": "SELECT q.a, q.d FROM (SELECT r.a, t.d FROM (r JOIN t ON r.b = t.c)) AS q",
    # the ON inside the parentheses was lost (every system: the view was a cross product)
    "inner join of a parenthesized join": "SELECT r.a, s.c, t.d FROM r JOIN (s JOIN t ON t.c = s.c) ON s.b = r.a",
    # first in parentheses, before an inner or RIGHT join: its WHERE goes into that join's ON (the view,
    # WITH query or generate_series lost the joins after it, or was refused)
    "filtering view first in a parenthesized join": ("SELECT r.a, x.c, s.b FROM r LEFT JOIN (pos_t AS x JOIN s "
                                                     "ON s.c = x.c) ON s.b = r.a"),
    "with first in a parenthesized right join": ("WITH x AS (SELECT c, d FROM t WHERE d > 0) SELECT r.a, x.c, s.b "
                                                 "FROM r FULL JOIN (x RIGHT JOIN s ON s.c = x.c) ON s.b = r.a"),
    # beside a WITH query or a subquery: schema-qualified tables, generate_series and VALUES (refused before)
    "schema-qualified tables beside a with query": ("WITH x AS (SELECT c, d FROM public.t WHERE d > 0) "
                                                    "SELECT r.a, x.c FROM public.r LEFT JOIN x ON x.c = r.b"),
    "generate_series in a with query": ("WITH g AS (SELECT k FROM generate_series(0, 2) AS z(k)) "
                                        "SELECT r.a, g.k FROM r JOIN g ON g.k = r.b"),
    "values beside a subquery": ("SELECT q.a, v.name FROM (SELECT a, b FROM r WHERE a > 0) AS q "
                                 "JOIN (VALUES (0, 'z'), (1, 'o')) AS v(k, name) ON v.k = q.b"),
    "generate_series first in a parenthesized join": ("SELECT r.a, g.k FROM r LEFT JOIN (generate_series(0, 2) AS g(k) "
                                                      "JOIN s ON s.b = g.k) ON s.c = r.a"),
}


def _write_rst(conn: psycopg.Connection, rng: random.Random) -> None:
    table = rng.choice(["r", "s", "t"])
    if rng.random() < 0.7:
        conn.execute(f"INSERT INTO {table} VALUES (%s, %s)", [rng.randint(0, 4), rng.randint(-1, 3)])
    else:
        conn.execute(f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} ORDER BY random() LIMIT 2)")


@pytest.mark.parametrize("label", list(JOINED))
def test_filtering_subqueries_in_joins_after_every_statement(conn: psycopg.Connection, dsn: str, label: str) -> None:
    """A subquery, WITH query or plain view that filters, inside a parenthesized join or on the
    NULL-extended side of an outer join: its WHERE holds with its join, not over the whole query."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, d int)")
    conn.execute("CREATE VIEW pos_t AS SELECT c, d FROM t WHERE d > 0; "
                 "CREATE VIEW pos_small_t AS SELECT * FROM pos_t WHERE c < 3; "
                 "CREATE VIEW r_t AS SELECT r.a, t.d FROM r JOIN t ON r.b = t.c")
    conn.execute("SELECT setseed(0.25)")
    rng = random.Random(label)
    for _ in range(25):
        _write_rst(conn, rng)
    assert _states_after_every_statement(conn, dsn, JOINED[label], rng) > 3


def _states_after_every_statement(conn: psycopg.Connection, dsn: str, query: str, rng: random.Random) -> int:
    """The query under first-order, recompute and the default system, compared with PostgreSQL's
    evaluation after each of 30 writes; the number of distinct results seen."""
    for system in ("first-order", "recompute", None):
        command.create(f"v_{system or 'default'}".replace("-", "_"), query, system=system, target=dsn)
    seen = set()
    for step in range(30):
        _write_rst(conn, rng)
        expected = sorted(conn.execute(query).fetchall(), key=repr)
        seen.add(repr(expected))
        for system in ("first_order", "recompute", "default"):
            assert sorted(conn.execute(f"SELECT * FROM v_{system}").fetchall(), key=repr) == expected, (system, step)
    return len(seen)



def test_quoted_and_schema_qualified_names_beside_a_subquery_after_every_statement(conn: psycopg.Connection) -> None:
    """sqlglot's qualify folds names it is given: "Id" became id and was "unknown" (a refusal), and a
    schema-qualified table was refused ("set search_path instead")."""
    conn.execute('CREATE SCHEMA "Sales"; CREATE TABLE "Sales"."Orders" ("Id" int, cust int); '
                 'CREATE SCHEMA other; CREATE TABLE other.r (a int, b int); CREATE TABLE r (a int, b int)')
    queries = {
        "mixed": 'SELECT o."Id", x.b FROM "Sales"."Orders" o JOIN (SELECT a, b FROM other.r WHERE b > 1) x ON x.a = o.cust',
        "two schemas": "WITH x AS (SELECT a, b FROM other.r) SELECT r.b, x.b AS xb FROM public.r JOIN x ON x.a = r.a",
    }
    for name, query in queries.items():
        command.create(name.replace(" ", "_"), query, target=conn)
    rng = random.Random(7)
    for step in range(24):
        table = rng.choice(['"Sales"."Orders"', "other.r", "r"])
        if rng.random() < 0.7:
            conn.execute(f"INSERT INTO {table} VALUES (%s, %s)", [rng.randint(0, 3), rng.randint(0, 4)])
        else:
            conn.execute(f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} LIMIT 1)")
        for name, query in queries.items():
            expected = sorted(conn.execute(query).fetchall(), key=repr)
            assert sorted(conn.execute(f"SELECT * FROM {name.replace(' ', '_')}").fetchall(), key=repr) == expected, (name, step)
    assert all(conn.execute(f"SELECT count(*) FROM {name.replace(' ', '_')}").fetchone()[0] > 0 for name in queries)


JOINING = {
    # a subquery that joins, on the right of a join: merged as a parenthesized join (was refused as
    # if it aggregated); its tables renamed where the outer query has one of their names
    "joining subquery on the right of a join": ("SELECT r.a, x.d, x.k FROM r JOIN (SELECT s.b, t.d, s.c + t.d AS k "
                                                "FROM s JOIN t ON s.c = t.c) AS x ON x.b = r.b"),
    "joining subquery on the right of a left join": ("SELECT r.a, x.d FROM r LEFT JOIN (SELECT s.b, t.d FROM s "
                                                     "LEFT JOIN t ON s.c = t.c WHERE t.d <> 0) AS x ON x.b = r.b"),
    "two joining subqueries reading one table": ("SELECT r.a, x.d, y.c FROM r JOIN (SELECT s.b, t.d FROM s JOIN t "
                                                 "ON s.c = t.c) AS x ON x.b = r.b JOIN (SELECT s.c, r.a AS ra FROM s "
                                                 "JOIN r ON r.b = s.b) AS y ON y.ra = r.a"),
    "aliased parenthesized join": ("SELECT r.a, x.c, x.d FROM r JOIN (s JOIN t USING (c)) AS x ON x.b = r.b"),
    "aliased parenthesized join, USING its column": "SELECT r.a, x.d FROM r JOIN (s JOIN t USING (c)) AS x USING (b)",
    # one table at three levels: each level's s renamed once, none twice (was "Alias already used: s_2")
    "one table at three levels": ("SELECT x.a, s.b FROM s JOIN (SELECT s.b AS a FROM s JOIN (SELECT s.c FROM s JOIN t "
                                  "ON s.c = t.c) AS p1 ON p1.c = s.b) AS x ON x.a = s.c"),
    "aliased joins at three levels": ("SELECT p2.a, s.b FROM s JOIN (s JOIN (r JOIN s USING (b)) AS p1 ON p1.c = s.b) "
                                      "AS p2 ON p2.a = s.c"),
    # the USING column of an aliased join, coalesce(s.c, t.c) to sqlglot, read on the NULL-extended side:
    # NULL there as PostgreSQL makes it (was refused as a computed output)
    "using column of an aliased join under a left join": ("SELECT r.a, x.c, x.d FROM r LEFT JOIN (s JOIN t USING (c)) "
                                                          "AS x ON x.b = r.b"),
    # outputs NULL on a NULL-extended row, as PostgreSQL makes them, where a later outer join may
    "computed outputs before a right join": ("SELECT r.a, x.k, x.d FROM (SELECT s.b, s.c * 2 + 1 AS k, t.d FROM s "
                                             "JOIN t ON s.c = t.c) AS x RIGHT JOIN r ON x.b = r.b"),
}


@pytest.mark.parametrize("label", list(JOINING))
def test_joining_subqueries_in_joins_after_every_statement(conn: psycopg.Connection, dsn: str, label: str) -> None:
    """A subquery or aliased parenthesized join that joins, on the right of a join, is the
    parenthesized join it reads: maintained after every statement (denser tables than above: each
    joined row needs three to four tables to agree)."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, d int)")
    conn.execute("SELECT setseed(0.5)")
    rng = random.Random(label)
    for table in ("r", "s", "t"):
        conn.execute(f"INSERT INTO {table} SELECT (random() * 4)::int, (random() * 3)::int FROM generate_series(1, 12)")
    assert _states_after_every_statement(conn, dsn, JOINING[label], rng) > 10


@pytest.mark.parametrize("system", ["first-order", "recompute"])
def test_left_join_lateral_after_every_statement(conn: psycopg.Connection, dsn: str, system: str) -> None:
    """``LEFT JOIN LATERAL (...) AS x ON cond``: a LEFT JOIN on cond and the correlations, rows of r
    without a match NULL-extended, as PostgreSQL gives them."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    conn.execute("SELECT setseed(0.5)")
    query = ("SELECT r.a, r.b, x.c, x.c2 FROM r LEFT JOIN LATERAL (SELECT s.c, s2.c AS c2 FROM s JOIN s AS s2 ON s2.b = s.c "
             "WHERE s.b = r.b) AS x ON x.c2 >= r.a")
    command.create("v", query, system=system, target=dsn)
    rng = random.Random(system)
    seen = set()
    for step in range(40):
        _write(conn, rng)
        expected = sorted(conn.execute(query).fetchall(), key=repr)
        seen.add(repr(expected))
        assert sorted(conn.execute("SELECT * FROM v").fetchall(), key=repr) == expected, step
    assert len(seen) > 5 and command.verify("v", target=dsn).ok

"""IVMε's triangle listing ([L] Appendix E): bounds on what an update and a read touch, the
listing's invariants found broken when its state is, and what it refuses.

The randomized streams (every statement kind, each ε, both forms, after every statement the view's
rows against the query's) are in test_differential.py (``test_listing_*``).
"""

from __future__ import annotations

import random

import psycopg
import pytest

from pgivm import command
from pgivm.errors import PgivmError
from test_complexity import HUBS, build_skewed, rows_read_by, single_update_reads

LISTING_SQL = "SELECT r.a, r.b, s.c FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a"


@pytest.mark.parametrize("epsilon", [0.25, 0.5])  # the hubs are heavy
def test_listing_update_reads_within_the_bound(conn: psycopg.Connection, epsilon: float) -> None:
    """One single-row update reads O(N^max(ε,1-ε)) state rows with the listing too, never a hub's degree."""
    build_skewed(conn, random.Random(7))
    command.create("tri", LISTING_SQL, system="ivme", epsilon=epsilon, target=conn)
    n = conn.execute("SELECT n FROM pgivm_tri.state").fetchone()[0]
    hub_degree = conn.execute("SELECT max(degree) FROM pgivm_tri.s_degree").fetchone()[0]
    assert conn.execute("SELECT bool_and(heavy) FROM pgivm_tri.s_degree WHERE b = ANY(%s)", [HUBS]).fetchone()[0]
    bound = n ** max(epsilon, 1 - epsilon)
    samples = single_update_reads(conn)
    worst = max(samples, key=lambda s: s[3])
    # the count's two bounded loops and the listing's three (each <= 2 N^(1-eps) or < 3/2 N^eps rows)
    assert worst[3] <= 16 * bound + 80, f"update {worst} read {worst[3]} rows; bound ~ {bound:.0f} (N = {n})"
    if epsilon == 0.5:  # (at 0.25 the loops over M_heavy(., alpha), <= 2 N^0.75 rows, may well be longer)
        assert worst[3] < hub_degree, f"update {worst} read as many rows as a hub's degree ({hub_degree})"
    report = command.verify("tri", target=conn)
    assert report.ok, [str(f) for f in report.failures]


def test_reading_the_listing_reads_a_constant_per_triangle(conn: psycopg.Connection) -> None:
    """Constant delay: W_RS holds a heavy value's 2-paths R_h S_l, most of which no T tuple closes;
    reading the view reads a few state rows per triangle returned, not the 2-paths."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    conn.execute("INSERT INTO r SELECT 0, b FROM generate_series(1, 400) b")  # a = 0: heavy
    conn.execute("INSERT INTO s SELECT b, 1000 + b % 50 FROM generate_series(1, 400) b")  # b light: 400 2-paths 0-b-c
    conn.execute("INSERT INTO t VALUES (1000, 0), (1001, 0)")  # closes the 16 2-paths through c = 1000, 1001
    command.create("tri", LISTING_SQL, system="ivme", epsilon=0.5, target=conn)
    w_rows = conn.execute("SELECT count(*) FROM pgivm_tri.w_rs").fetchone()[0]
    assert w_rows == 400, "the test's 2-paths are not in W_RS"
    conn.execute("ANALYZE")
    read, _ = rows_read_by(conn, "SELECT * FROM tri", [])
    triangles = conn.execute("SELECT count(*) FROM tri").fetchone()[0]
    assert triangles == 16
    assert read <= 4 * triangles + 20, f"reading {triangles} triangles read {read} state rows (W_RS has {w_rows})"


def test_verify_finds_a_broken_listing(conn: psycopg.Connection) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    conn.execute("INSERT INTO r SELECT a, b FROM generate_series(1, 6) a, generate_series(1, 6) b")
    conn.execute("INSERT INTO s SELECT b, c FROM generate_series(1, 6) b, generate_series(1, 3) c")
    conn.execute("INSERT INTO t SELECT c, a FROM generate_series(1, 3) c, generate_series(1, 6) a")
    command.create("tri", LISTING_SQL, system="ivme", epsilon=0.5, target=conn)
    assert command.verify("tri", target=conn).ok
    assert command.status("tri", target=conn).count == 6 * 6 * 3
    conn.execute("SET session_replication_role = replica")
    conn.execute("UPDATE pgivm_tri.listing SET mult = 2 WHERE (a, b, c) = (SELECT a, b, c FROM pgivm_tri.listing LIMIT 1)")
    failed = {f.check for f in command.verify("tri", target=conn).failures}
    assert {"materialized_triangles", "listing_counts_the_triangles", "result_equals_plain_sql"} <= failed, failed
    conn.execute("RESET session_replication_role")
    conn.execute("SELECT pgivm_tri.major_rebalance()")  # rebuilds the listing from the parts
    assert command.verify("tri", target=conn).ok
    conn.execute("INSERT INTO r SELECT 100, b FROM generate_series(1, 40) b")  # a = 100 turns heavy: W_RS(100, b, c)
    assert conn.execute("SELECT count(*) FROM pgivm_tri.w_rs").fetchone()[0] > 0
    assert command.verify("tri", target=conn).ok
    conn.execute("SET session_replication_role = replica")
    conn.execute("DELETE FROM pgivm_tri.w_rs WHERE ctid = (SELECT ctid FROM pgivm_tri.w_rs LIMIT 1)")
    conn.execute("RESET session_replication_role")
    failed = {f.check for f in command.verify("tri", target=conn).failures}
    assert "R.w_view" in failed, failed


@pytest.mark.parametrize("query, message", [
    ("SELECT r.a, r.b FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a",
     "shows each of the three join variables"),
    ("SELECT r.a, r.b, s.c FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a WHERE r.a > 1",
     "only column = column equalities"),
    ("SELECT r.a, count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a GROUP BY r.a",
     "grouped by fewer than its three join variables"),
    ("SELECT DISTINCT r.a, s.c FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a",
     "grouped by fewer than its three join variables"),
    ("SELECT r.a, r.b, s.c, count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a "
     "GROUP BY r.a, r.b, s.c HAVING count(*) > 1", "HAVING is not supported in a triangle listing"),
    ("SELECT r.a, r.b, s.c, sum(r.a) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a GROUP BY 1, 2, 3",
     "unsupported aggregate SUM(r.a)"),
    ("SELECT r.a + 1, r.b, s.c FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a",
     "not expressions over them"),
])
def test_listings_ivme_refuses(conn: psycopg.Connection, query: str, message: str) -> None:
    """A query close to a listing is refused by ivme in one line, and maintained by first-order by default."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    with pytest.raises(PgivmError) as refused:
        command.create("tri", query, system="ivme", target=conn)
    assert message in str(refused.value) and "\n" not in str(refused.value)
    assert conn.execute("SELECT count(*) FROM pgivm_catalog.views").fetchone()[0] == 0
    command.create("tri", query, target=conn)
    assert command.status("tri", target=conn).system != "ivme"


# The triangles grouped by their three variables: each distinct one once, with its count.
GROUPED_SQL = ("SELECT s.c, count(*) AS n, r.a, t.c AS c2, r.b FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c "
               "AND t.a = r.a GROUP BY r.a, r.b, s.c, t.c")
DISTINCT_SQL = "SELECT DISTINCT r.b, s.c, r.a FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a"


def test_grouped_listings_show_each_triangle_once(conn: psycopg.Connection) -> None:
    """GROUP BY the three variables and DISTINCT: ivme by default, each distinct triangle once with
    its multiplicity as count(*); list and status count the rows shown, not the triangles."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    conn.execute("INSERT INTO r VALUES (1, 2), (1, 2), (1, 3); INSERT INTO s VALUES (2, 4), (3, 4), (3, 4); "
                 "INSERT INTO t VALUES (4, 1), (4, 1), (4, 1)")
    for name, query in (("grouped", GROUPED_SQL), ("uniq", DISTINCT_SQL)):
        command.create(name, query, target=conn)
        assert command.status(name, target=conn).system == "ivme"
        assert sorted(conn.execute(f"SELECT * FROM {name}").fetchall()) == sorted(conn.execute(query).fetchall())
        assert command.status(name, target=conn).count == 2 and command.status(name, target=conn).counts == "rows"
        assert command.verify(name, target=conn).ok
    assert sorted(conn.execute("SELECT n FROM grouped").fetchall()) == [(6,), (6,)]  # 2·1·3 and 1·2·3
    assert "grouped by the three variables" in "\n".join(command.explain("grouped", target=conn))


@pytest.mark.parametrize("query, refresh", [(LISTING_SQL, "immediate"), (LISTING_SQL, "deferred"),
                                            (GROUPED_SQL, "immediate"), (DISTINCT_SQL, "deferred")],
                         ids=["listing-immediate", "listing-deferred", "grouped-immediate", "distinct-deferred"])
def test_listing_under_a_random_stream_with_rollbacks(conn: psycopg.Connection, query: str, refresh: str) -> None:
    """Single- and multi-row writes, duplicates, deletes of absent rows, join-column UPDATEs,
    TRUNCATE and rolled-back transactions on a small domain at ε = ¼ (values move between the parts):
    after every statement the view's rows are the query's, as bags; verify at the end."""
    rnd = random.Random(5)
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    command.create("tri", query, system="ivme", epsilon=0.25, refresh=refresh, target=conn)
    columns = {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}

    def statement() -> str:
        table = rnd.choice("rst")
        x, y = columns[table]
        v = lambda: rnd.choice([0, 0, 1, 1, 2, 3, 4, 5, 6, 7])  # noqa: E731 - skewed: 0 and 1 turn heavy
        kind = rnd.random()
        if kind < 0.5:
            return f"INSERT INTO {table} VALUES " + ", ".join(f"({v()}, {v()})" for _ in range(rnd.randint(1, 6)))
        if kind < 0.75:
            return f"DELETE FROM {table} WHERE {x} = {v()} AND {y} = {v()}"
        if kind < 0.95:
            return f"UPDATE {table} SET {y} = {v()} WHERE {x} = {v()}"
        return f"TRUNCATE {table}"

    shown = []
    for step in range(160):
        if rnd.random() < 0.08:
            with pytest.raises(RuntimeError), conn.transaction():
                conn.execute(statement())
                raise RuntimeError("rolled back")
        else:
            conn.execute(statement())
        rows, expected = (sorted(conn.execute(q).fetchall()) for q in ("SELECT * FROM tri", query))
        assert rows == expected, f"step {step}"
        shown.append(len(rows))
    assert max(shown) > (50 if query == LISTING_SQL else 12) and min(shown[80:]) < max(shown[80:])  # (distinct: fewer)
    minor = conn.execute("SELECT minor_rebalances FROM pgivm_tri.state").fetchone()[0]
    assert minor > 0, "no value moved between the parts"
    report = command.verify("tri", target=conn)
    assert report.ok, [str(f) for f in report.failures]

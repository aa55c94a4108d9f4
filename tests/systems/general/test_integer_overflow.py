"""Integer arithmetic inside sum and avg overflows where PostgreSQL's query raises (issue 21, item 12).

PostgreSQL computes ``sum(r.a * s.b)`` over integer columns row by row in integer arithmetic: a
joined row whose product does not fit raises 'integer out of range' (bigint: 'bigint out of
range'), and the query fails. A ring that sums each table's factors apart in numeric never sees
that row, and would show a number. So F-IVM refuses integer arithmetic (in one line, when asked
for) and first-order takes the view by default: it evaluates the argument as written on each joined
row that arrives, so the statement making such a row fails as the query would (immediate), or the
read fails until that row goes (deferred). A row that joins nothing may hold any value: PostgreSQL
never computes its product. Checked after every statement against PostgreSQL's own evaluation.
"""

from __future__ import annotations

import psycopg
import pytest

from pgivm import command
from pgivm.errors import UnsupportedQuery

from conftest import result_differences

QUERY = "SELECT r.k, sum(r.a * s.b) AS p, avg(r.a + s.b) AS m, count(*) AS n FROM r JOIN s ON r.k = s.k GROUP BY r.k"
BIG = 50_000  # 50,000 · 50,000 = 2.5e9 > 2^31 - 1


def _tables(conn: psycopg.Connection, kind: str) -> None:
    conn.execute(f"CREATE TABLE r (k int, a {kind}); CREATE TABLE s (k int, b {kind})")
    conn.execute("INSERT INTO r VALUES (1, 3), (1, 4), (2, 5); INSERT INTO s VALUES (1, 10), (2, 20), (2, 21)")


def test_fivm_refuses_integer_arithmetic_and_first_order_is_the_default(conn: psycopg.Connection, dsn: str) -> None:
    _tables(conn, "int")
    with pytest.raises(UnsupportedQuery, match=r"system fivm cannot maintain this query: SUM\(r\.a \* s\.b\): "
                                              r"\(r\.a \* s\.b\) is integer arithmetic") as info:
        command.create("v", QUERY, system="fivm", target=dsn)
    assert "\n" not in str(info.value) and len(str(info.value)) < 250
    assert command.create("v", QUERY, target=dsn).system == "first-order"
    assert any("not fivm: SUM(r.a * s.b): (r.a * s.b) is integer arithmetic" in line
               for line in command.explain("v", target=dsn))
    # no arithmetic, or arithmetic PostgreSQL does in numeric: F-IVM stays the default
    assert command.create("w", "SELECT sum(r.a) AS a, count(*) AS n FROM r JOIN s ON r.k = s.k", target=dsn).system == "fivm"
    assert command.create("x", "SELECT sum(r.a * 1.5) AS a FROM r JOIN s ON r.k = s.k", target=dsn).system == "fivm"
    assert command.create("y", "SELECT sum(1.0 * r.a * s.b) AS p FROM r JOIN s ON r.k = s.k", target=dsn).system == "fivm"


@pytest.mark.parametrize(("system", "refresh", "kind"), [
    ("first-order", "immediate", "int"), ("first-order", "deferred", "int"), ("first-order", "immediate", "bigint"),
    ("first-order", "immediate", "smallint"), ("recompute", "immediate", "int"),
])
def test_a_row_that_overflows_fails_as_postgres_query_does(conn: psycopg.Connection, dsn: str, system: str,
                                                            refresh: str, kind: str) -> None:
    _tables(conn, kind)
    big = {"smallint": 200, "int": BIG, "bigint": 2 ** 32}[kind]  # the square beyond the type
    options = {"refresh": "deferred", "budget": 1000} if refresh == "deferred" else {}
    command.create("v", QUERY, system=system, target=dsn, **options)
    statements = [
        f"INSERT INTO r VALUES (3, {big})",                  # joins nothing: PostgreSQL computes no product
        f"INSERT INTO s VALUES (3, 1), (1, {big})",          # 3·big, 4·big and big·1 fit
        f"INSERT INTO s VALUES (3, {big})",                  # big·big does not
        "UPDATE r SET a = 2 WHERE k = 3",
        f"INSERT INTO s VALUES (3, {big})",
        f"UPDATE r SET k = 3 WHERE a = 5",                   # 5·big fits
        f"UPDATE s SET b = {big} WHERE k = 2 AND b = 20",     # joins nothing now
        f"UPDATE r SET a = {big} WHERE k = 1 AND a = 3",     # big·big again
        "DELETE FROM s WHERE k = 1 AND b <> 10",
        f"UPDATE r SET a = {big} WHERE k = 1 AND a = 3",
    ]
    failed = []
    for statement in statements:
        try:
            conn.execute(statement)
        except psycopg.errors.NumericValueOutOfRange:
            failed.append(statement)
        assert result_differences(conn, "v", QUERY, 1) == [], statement
    if refresh == "immediate":  # the statements making an overflowing row failed, as the query would
        assert failed == [statements[2], statements[7]]
    else:  # they were logged; the view then raised on read, as the query did, until the row went
        assert failed == []
    assert command.verify("v", target=dsn).ok or refresh == "deferred"


def test_create_over_a_row_that_overflows_fails_in_one_line(conn: psycopg.Connection, dsn: str) -> None:
    _tables(conn, "int")
    conn.execute(f"INSERT INTO r VALUES (2, {BIG}); INSERT INTO s VALUES (2, {BIG})")
    with pytest.raises(Exception, match="integer out of range") as info:
        command.create("v", QUERY, target=dsn)
    assert "\n" not in str(info.value).strip()
    assert conn.execute("SELECT count(*) FROM pg_class WHERE relname = 'v'").fetchone() == (0,)


EXTREMES = "SELECT r.k, max(r.a * s.b) AS hi, min(r.a - s.b) AS lo, count(*) AS n FROM r JOIN s ON r.k = s.k GROUP BY r.k"


@pytest.mark.parametrize("query", [QUERY, EXTREMES], ids=["sum", "min-max"])
@pytest.mark.parametrize("between", [False, True], ids=["applied together", "read between"])
def test_a_deferred_view_evaluates_only_rows_of_the_tables_as_they_are(conn: psycopg.Connection, dsn: str, query: str,
                                                                       between: bool) -> None:
    """r's big row, already in the view, leaves; then s's big row arrives. Applied together, s's
    rows read r as the view had it (the live rows less r's pending change), so r's big row meets
    the new s row though the two never were rows together: that joined row must not be evaluated
    (big·big would fail the action, and so every read after it, for good). With a read between,
    r's row is gone before s's arrives: nothing overflows either way."""
    _tables(conn, "int")
    conn.execute(f"INSERT INTO r VALUES (3, {BIG})")
    command.create("v", query, system="first-order", target=dsn, refresh="deferred", budget=1000)
    conn.execute("DELETE FROM r WHERE k = 3")
    if between:
        assert result_differences(conn, "v", query, 1) == []
    conn.execute(f"INSERT INTO s VALUES (3, {BIG})")
    assert result_differences(conn, "v", query, 1) == []
    assert conn.execute("SELECT count(*) FROM v").fetchone() == (2,)
    conn.execute(f"INSERT INTO r VALUES (3, {BIG})")  # now they are rows together: the read fails, as the query does
    with pytest.raises(psycopg.errors.NumericValueOutOfRange):
        conn.execute(query).fetchall()
    assert result_differences(conn, "v", query, 1) == []
    conn.execute("DELETE FROM s WHERE k = 3")
    assert result_differences(conn, "v", query, 1) == []
    assert command.verify("v", target=dsn).ok

"""Float sums under F-IVM and first-order, immediate and deferred, against PostgreSQL itself.

Each scenario inserts and deletes rows holding Infinity, -Infinity, NaN, zero and values of very
different magnitude, and after every statement reads the view and compares it with PostgreSQL's
own evaluation of the view's SQL over the current rows (floats to 1e-9 relative, NaN equal to NaN,
infinities exact). A row leaving must restore what its arrival changed: a float8 accumulator
cannot (Inf − Inf is NaN, 1e16 + 1 − 1e16 is 0). Deferred views are read after every statement,
so each change is applied on its own, as immediate views apply it.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
import pytest

from conftest import result_differences
from pgivm import command
from pgivm.errors import PgivmError

R_S = "CREATE TABLE r (k int, f float8, h real, x int); CREATE TABLE s (k int, g float8)"


@dataclass(frozen=True)
class Scenario:
    query: str
    statements: tuple[str, ...]
    keys: int = 0  # leading GROUP BY columns (cofactor: i, j)
    setup: str = "INSERT INTO r VALUES (1, 1, 1, 1), (1, 3, 3, 2); INSERT INTO s VALUES (1, 0.1)"
    expected: str = ""  # PostgreSQL's SQL for the view's rows, when not the view's own (cofactor)
    schema: str = R_S


# PostgreSQL's own cofactor matrix (what verify recomputes a cofactor view with), for r.f and s.g
COFACTOR_SQL = (
    "SELECT e.i, e.j, e.value FROM (SELECT count(*)::float8 AS c, sum(r.f) AS s1, sum(s.g) AS s2, sum(r.f * r.f) AS q11, "
    "sum(r.f * s.g) AS q12, sum(s.g * s.g) AS q22 FROM r JOIN s ON r.k = s.k WHERE r.f IS NOT NULL AND s.g IS NOT NULL) AS q "
    "CROSS JOIN LATERAL (VALUES (0, 0, c), (0, 1, s1), (1, 0, s1), (0, 2, s2), (2, 0, s2), (1, 1, q11), (1, 2, q12), "
    "(2, 1, q12), (2, 2, q22)) AS e(i, j, value) WHERE q.c > 0")
COFACTOR_X_SQL = (
    "SELECT e.i, e.j, e.value FROM (SELECT count(*)::float8 AS c, sum(r.x::float8) AS s1, sum(r.x::float8 * r.x::float8) AS q11 "
    "FROM r JOIN s ON r.k = s.k WHERE r.x IS NOT NULL) AS q "
    "CROSS JOIN LATERAL (VALUES (0, 0, c), (0, 1, s1), (1, 0, s1), (1, 1, q11)) AS e(i, j, value) WHERE q.c > 0")

SCENARIOS = {
    # the case: avg 2.0 and sum 0.4 again once the Infinity has left
    "infinity-inserted-then-deleted": Scenario(
        "SELECT avg(r.f) AS a, sum(r.f * s.g) AS p FROM r JOIN s ON r.k = s.k",
        ("INSERT INTO r VALUES (1, 'Infinity', 1, 1)", "DELETE FROM r WHERE f = 'Infinity'")),
    # 1e16 + 1 - 1e16 is 0 in float8; PostgreSQL sums the one row left: 1
    "large-value-leaves": Scenario(
        "SELECT sum(r.f) AS s, avg(r.f) AS a FROM r JOIN s ON r.k = s.k",
        ("INSERT INTO r VALUES (1, 1e16, 1, 1)", "INSERT INTO r VALUES (1, 1, 1, 1)", "DELETE FROM r WHERE f = 1e16"),
        setup="INSERT INTO s VALUES (1, 0.1)"),
    "nan-inserted-then-deleted": Scenario(
        "SELECT sum(r.f) AS s, avg(r.f) AS a, sum(r.f * s.g) AS p FROM r JOIN s ON r.k = s.k",
        ("INSERT INTO r VALUES (1, 'NaN', 1, 1)", "INSERT INTO s VALUES (1, 'NaN')", "DELETE FROM r WHERE f = 'NaN'",
         "DELETE FROM s WHERE g = 'NaN'")),
    # +Inf and -Inf terms together are NaN; either alone is itself
    "both-infinities": Scenario(
        "SELECT sum(r.f) AS s, sum(r.f * s.g) AS p FROM r JOIN s ON r.k = s.k",
        ("INSERT INTO r VALUES (1, 'Infinity', 1, 1)", "INSERT INTO r VALUES (1, '-Infinity', 1, 1)",
         "DELETE FROM r WHERE f = 'Infinity'", "INSERT INTO r VALUES (1, 'Infinity', 1, 1)",
         "DELETE FROM r WHERE f = '-Infinity'", "DELETE FROM r WHERE f = 'Infinity'")),
    # Inf paired with 0 is NaN, with a negative -Inf, with a positive Inf: the product's class from the pairs
    "infinity-times-zero-and-signs": Scenario(
        "SELECT sum(r.f * s.g) AS p, avg(s.g * r.f) AS a, sum(r.x * s.g) AS q FROM r JOIN s ON r.k = s.k",
        ("INSERT INTO r VALUES (1, 'Infinity', 1, 1)", "INSERT INTO s VALUES (1, 0)", "DELETE FROM s WHERE g = 0",
         "INSERT INTO s VALUES (1, -2)", "DELETE FROM s WHERE g = 0.1", "INSERT INTO s VALUES (1, 'Infinity')",
         "UPDATE s SET g = 0 WHERE g = -2", "UPDATE r SET f = 0 WHERE f = 'Infinity'", "DELETE FROM s WHERE g = 0",
         "DELETE FROM r WHERE f = 0", "DELETE FROM s WHERE g = 'Infinity'")),
    # a float GROUP BY value multiplies each group's sum when read: Inf · (2, 0) is NaN, Inf · (2, 5) is Inf
    "group-by-a-float-column": Scenario(
        "SELECT r.f, sum(r.f * s.g) AS p, sum(r.f + s.g) AS q, count(*) AS n FROM r JOIN s ON r.k = s.k GROUP BY r.f",
        ("INSERT INTO r VALUES (1, 'Infinity', 1, 1), (1, '-Infinity', 1, 1), (1, 'NaN', 1, 1)",
         "INSERT INTO s VALUES (1, 0)", "DELETE FROM s WHERE g = 0", "INSERT INTO s VALUES (1, 5)",
         "INSERT INTO s VALUES (1, -3)", "DELETE FROM s WHERE g = 0.1", "DELETE FROM s WHERE g = -3"),
        keys=1),
    # sum(real) is real, avg(real) float8
    "real-column": Scenario(
        "SELECT sum(r.h) AS s, avg(r.h) AS a, sum(r.h * s.g) AS p FROM r JOIN s ON r.k = s.k",
        ("INSERT INTO r VALUES (1, 1, 'Infinity', 1)", "INSERT INTO r VALUES (1, 1, 16777216, 1)",
         "INSERT INTO r VALUES (1, 1, 0.5, 1)", "DELETE FROM r WHERE h = 'Infinity'", "DELETE FROM r WHERE h = 16777216")),
    "cofactor": Scenario(
        "SELECT cofactor(r.f, s.g) FROM r JOIN s ON r.k = s.k",
        ("INSERT INTO r VALUES (1, 'Infinity', 1, 1)", "INSERT INTO s VALUES (1, 0)", "DELETE FROM s WHERE g = 0",
         "DELETE FROM r WHERE f = 'Infinity'", "INSERT INTO r VALUES (1, 1e16, 1, 1)", "INSERT INTO s VALUES (1, 'NaN')",
         "DELETE FROM s WHERE g = 'NaN'", "DELETE FROM r WHERE f = 1e16"),
        keys=2, expected=COFACTOR_SQL),
    # a float join column is summed where it is bound (F-IVM's lifting g_X): its characters too
    "float-join-column": Scenario(
        "SELECT sum(r.k * s.g) AS p, sum(r.k) AS a, avg(s.k * r.f) AS b FROM r JOIN s ON r.k = s.k",
        ("INSERT INTO r VALUES ('Infinity', 1, 1, 1)", "INSERT INTO s VALUES ('Infinity', 2)",
         "INSERT INTO s VALUES ('Infinity', 0)", "INSERT INTO r VALUES ('NaN', 1, 1, 1), (-2, -1, 1, 1)",
         "INSERT INTO s VALUES ('NaN', 1), (-2, 3)", "DELETE FROM s WHERE g = 0", "DELETE FROM r WHERE k = 'Infinity'",
         "DELETE FROM r WHERE k = 'NaN'"),
        schema=R_S.replace("r (k int", "r (k float8").replace("s (k int", "s (k float8")),
    "cofactor-float-join-column": Scenario(
        "SELECT cofactor(r.k, s.g) FROM r JOIN s ON r.k = s.k",
        ("INSERT INTO r VALUES ('Infinity', 1, 1, 1)", "INSERT INTO s VALUES ('Infinity', 2)",
         "INSERT INTO s VALUES ('Infinity', 0)", "DELETE FROM s WHERE g = 0", "DELETE FROM r WHERE k = 'Infinity'"),
        keys=2, expected=COFACTOR_SQL.replace("r.f", "r.k"),
        schema=R_S.replace("r (k int", "r (k float8").replace("s (k int", "s (k float8")),
    # integer features are exact too: (2^31 - 1)² + 9 - (2^31 - 1)² is 0 in float8
    "cofactor-integers": Scenario(
        "SELECT cofactor(r.x) FROM r JOIN s ON r.k = s.k",
        ("INSERT INTO r VALUES (1, 1, 1, 2147483647)", "INSERT INTO r VALUES (1, 1, 1, 3)",
         "DELETE FROM r WHERE x = 2147483647"),
        keys=2, expected=COFACTOR_X_SQL),
}
# numeric has NaN and ±Infinity with the same arithmetic: its sums are classified the same way (floats.py)
NUMERIC = R_S.replace("f float8", "f numeric").replace("g float8", "g numeric")
SCENARIOS.update({f"numeric-{name}": Scenario(SCENARIOS[name].query, SCENARIOS[name].statements, SCENARIOS[name].keys,
                                               SCENARIOS[name].setup, SCENARIOS[name].expected, NUMERIC)
                  for name in ("both-infinities", "infinity-times-zero-and-signs", "group-by-a-float-column", "cofactor",
                               "nan-inserted-then-deleted")})
RUNS = [(scenario, system, refresh) for scenario in SCENARIOS for system in ("fivm", "first-order")
        for refresh in ("immediate", "deferred") if not (SCENARIOS[scenario].expected and system == "first-order")]


@pytest.mark.parametrize(("scenario", "system", "refresh"), RUNS, ids=["-".join(r) for r in RUNS])
def test_float_sums_equal_postgres_after_every_statement(conn: psycopg.Connection, dsn: str, scenario: str,
                                                          system: str, refresh: str) -> None:
    case = SCENARIOS[scenario]
    conn.execute(case.schema)
    conn.execute(case.setup)
    options = {"refresh": "deferred", "budget": 1000} if refresh == "deferred" else {}
    command.create("v", case.query, system=system, target=dsn, **options)
    expected = case.expected or case.query
    assert result_differences(conn, "v", expected, case.keys) == [], "after create"
    for statement in case.statements:
        assert conn.execute(statement).rowcount > 0, statement
        assert result_differences(conn, "v", expected, case.keys) == [], statement
    report = command.verify("v", target=dsn)
    assert report.ok, [str(f) for f in report.failures]


@pytest.mark.parametrize("refresh", ["immediate", "deferred"])
def test_sum_of_int_beyond_bigint_raises_instead_of_a_wrong_number(conn: psycopg.Connection, dsn: str, refresh: str) -> None:
    """sum(int) is bigint: past 2^63 - 1 the read raises 'bigint out of range' (the accumulator is
    exact numeric), and the number is right again once the sum is back in range. Here 2^33 joined
    rows of 2^31 - 1 (PostgreSQL's own query would take minutes to enumerate them)."""
    conn.execute("CREATE TABLE r (k int, x int); CREATE TABLE s (k int); CREATE TABLE t (k int); CREATE TABLE u (k int)")
    conn.execute("INSERT INTO s SELECT 1 FROM generate_series(1, 2048); INSERT INTO t SELECT 1 FROM generate_series(1, 2048); "
                 "INSERT INTO u SELECT 1 FROM generate_series(1, 2048)")
    query = "SELECT sum(r.x) AS s, count(*) AS n FROM r JOIN s ON r.k = s.k JOIN t ON t.k = s.k JOIN u ON u.k = t.k"
    options = {"refresh": "deferred", "budget": 1000} if refresh == "deferred" else {}
    command.create("v", query, system="fivm", target=dsn, **options)
    conn.execute("INSERT INTO r VALUES (1, 2147483647)")
    with pytest.raises(psycopg.errors.NumericValueOutOfRange, match="bigint out of range"):
        conn.execute("SELECT s FROM v").fetchone()
    conn.execute("INSERT INTO r VALUES (1, -2147483647), (1, 3)")
    assert conn.execute("SELECT s, n FROM v").fetchone() == (3 * 2 ** 33, 3 * 2 ** 33)
    exact = "SELECT (2147483647::numeric * 2048 * 2048 * 2048)::bigint"  # the one row's share alone
    with pytest.raises(psycopg.errors.NumericValueOutOfRange, match="bigint out of range"):
        conn.execute(exact)


@pytest.mark.parametrize(("system", "argument", "reason"), [
    ("fivm", "(r.f + s.g) * r.f", "sum of products"), ("first-order", "(r.f + s.g) * r.f", "sum of products"),
    ("fivm", "0 * r.f", "sum of products"), ("fivm", "r.f * s.g - s.g * r.f", "sum of products"),
    ("fivm", "(r.f + 1) * s.g", r"r.f \+ 1: \+ \(overflow of an integer or a float\) may fail")])
def test_float_argument_expansion_would_change_is_refused(conn: psycopg.Connection, dsn: str, system: str,
                                                          argument: str, reason: str) -> None:
    """Row-wise (f + g)·f is NaN for f = Inf, g = -Inf, expanded f² + g·f is Inf - Inf: also NaN, but
    for f = -Inf, g = 1 it is Inf against NaN. Such an argument over floats is refused in one line.
    A sum over one table's columns, (f + 1), is one value of its row instead, which F-IVM computes
    on every row of r and would overflow where PostgreSQL's query never computes it: refused too."""
    conn.execute(R_S)
    with pytest.raises(PgivmError, match=reason) as info:
        command.create("v", f"SELECT sum({argument}) FROM r JOIN s ON r.k = s.k", system=system, target=dsn)
    assert "\n" not in str(info.value)
    command.create("w", "SELECT sum((r.x + 1.0) * r.x) AS s FROM r JOIN s ON r.k = s.k", system=system, target=dsn)
    assert conn.execute("SELECT s FROM w").fetchone() == (None,)


def test_first_order_takes_a_sum_over_one_tables_floats_as_one_value(conn: psycopg.Connection, dsn: str) -> None:
    """(f + 1)·g: f + 1 is one value of r's row, computed as PostgreSQL computes it, so the sum
    follows PostgreSQL's row-by-row value through f = -1 and g = ±Inf (NaN), f = -2 (-Inf), NaN."""
    conn.execute(R_S)
    query = "SELECT sum((r.f + 1) * s.g) AS p, count(*) AS n FROM r JOIN s ON r.k = s.k"
    assert command.create("v", query, target=dsn).system == "first-order"
    for statement in ["INSERT INTO r (k, f) VALUES (1, 2), (1, -1); INSERT INTO s VALUES (1, 3)",
                      "INSERT INTO s VALUES (1, 'Infinity')", "DELETE FROM r WHERE f = -1",
                      "INSERT INTO r (k, f) VALUES (1, -2)", "DELETE FROM s WHERE g = 'Infinity'",
                      "INSERT INTO r (k, f) VALUES (1, 'NaN')", "DELETE FROM r WHERE f = 'NaN'"]:
        conn.execute(statement)
        assert conn.execute("SELECT p::text, n FROM v").fetchone() == \
            conn.execute(f"SELECT p::text, n FROM ({query}) q").fetchone(), statement


@pytest.mark.parametrize(("system", "refresh"), [(s, r) for s in ("fivm", "first-order") for r in ("immediate", "deferred")])
def test_sessions_showing_floats_with_fewer_digits_change_nothing(conn: psycopg.Connection, dsn: str, system: str,
                                                                  refresh: str) -> None:
    """Floats reach the state through their text (shortest exact), which extra_float_digits <= 0
    rounds to 15 digits: 1e16 + 2 would go in as 1e16 and come out as 1e16 + 2. The build and the
    maintaining functions set it themselves, so who writes does not matter."""
    conn.execute(R_S)
    conn.execute("INSERT INTO s VALUES (1, 0.5); INSERT INTO r (k, f) VALUES (1, 10000000000000002)")
    query = "SELECT sum(r.f) AS s, sum(r.f * s.g) AS p FROM r JOIN s ON r.k = s.k"
    options = {"refresh": "deferred", "budget": 1000} if refresh == "deferred" else {}
    with psycopg.connect(dsn, autocommit=True) as rounded, psycopg.connect(dsn, autocommit=True) as full:
        rounded.execute("SET extra_float_digits = 0")
        full.execute("SET extra_float_digits = 3")
        command.create("v", query, system=system, target=rounded, **options)  # the build reads 1e16 + 2
        rounded.execute("INSERT INTO r (k, f) VALUES (1, 10000000000000002), (1, 1)")
        assert result_differences(rounded, "v", query, 0) == []
        full.execute("DELETE FROM r WHERE f > 1")
        for session in (rounded, full, conn):
            assert session.execute("SELECT s, p FROM v").fetchone() == (1.0, 0.5)
    assert result_differences(conn, "v", query, 0) == []

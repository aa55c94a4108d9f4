"""Conditions on one table beyond ``column OP constant`` (issue 22): IS [NOT] NULL, IN and NOT IN
lists, BETWEEN, LIKE and ILIKE, OR, NOT, CASE, arithmetic (``a % 2 = 0``), typed constants
(``DATE '2024-03-01'``, ``INTERVAL '1' MONTH``), casts, EXTRACT and PostgreSQL's immutable functions (coalesce, lower,
length, abs), in WHERE and in ON, over values with NULLs, on one table or (CASE) on two: under fivm
(one table's conditions), first-order and recompute,
immediate and deferred, after every statement against PostgreSQL's own evaluation of the same SQL.
What a condition may not call is refused in one line (a volatile function, a user's function).
"""

from __future__ import annotations

import random

import psycopg
import pytest

from pgivm import command
from pgivm.errors import PgivmError

SETUP = "CREATE TABLE r (a int, b int, d date, name text, x numeric); CREATE TABLE s (b int, c int, y int)"
WHERE = ("r.a IS NOT NULL AND (r.a % 2 = 0 OR r.name LIKE 'a%') AND r.d >= DATE '2024-03-01' "
         "AND s.c NOT IN (3, 4) AND coalesce(s.y, 0) BETWEEN 0 AND 4 AND NOT (lower(r.name) = 'bob')")
QUERIES = {
    "grouped sums": f"SELECT s.c, count(*) AS n, sum(r.x) AS sx FROM r JOIN s ON r.b = s.b WHERE {WHERE} GROUP BY s.c",
    "listing": ("SELECT r.name, s.c FROM r JOIN s ON r.b = s.b AND extract(month FROM r.d) IN (3, 5) "
                "WHERE CASE WHEN r.x IS NULL THEN s.y IS NULL ELSE r.x > 1.5 END "
                "AND r.d < DATE '2024-07-01' - INTERVAL '1' MONTH + INTERVAL '3 days'"),  # TPC-H's date arithmetic
    "count": ("SELECT count(*) AS n FROM r JOIN s ON r.b = s.b WHERE length(r.name) <= 3 AND abs(s.y - 2) < 2 "
              "AND r.d::text < '2024-06' AND r.name ILIKE '%E%' AND s.y IS NOT NULL"),
}
NAMES = ["ann", "bob", "eve", "al", "bea", None]


def _row(rng: random.Random, table: str) -> tuple[object, ...]:
    if table == "r":
        return (rng.choice([None, 0, 1, 2, 3, 4]), rng.randint(0, 3), f"2024-0{rng.randint(1, 7)}-1{rng.randint(0, 9)}",
                rng.choice(NAMES), rng.choice([None, 1, 1.5, 2.25, 7]))
    return rng.randint(0, 3), rng.randint(0, 5), rng.choice([None, 0, 1, 2, 3, 4, 6])


def _statement(conn: psycopg.Connection, rng: random.Random) -> None:
    table = rng.choice(["r", "s"])
    width = 5 if table == "r" else 3
    kind = rng.choice(["insert", "insert", "insert-many", "delete", "update"])
    if kind == "insert":
        conn.execute(f"INSERT INTO {table} VALUES ({', '.join(['%s'] * width)})", _row(rng, table))
    elif kind == "insert-many":
        rows = [_row(rng, table) for _ in range(rng.randint(2, 5))]
        rows.append(rows[0])  # a duplicate
        conn.execute(f"INSERT INTO {table} VALUES " + ", ".join([f"({', '.join(['%s'] * width)})"] * len(rows)),
                     [v for row in rows for v in row])
    elif kind == "delete":
        conn.execute(f"DELETE FROM {table} WHERE b = %s AND ctid IN (SELECT ctid FROM {table} LIMIT 3)", [rng.randint(0, 3)])
    elif table == "r":
        conn.execute("UPDATE r SET name = %s, a = a + 1 WHERE b = %s", [rng.choice(NAMES), rng.randint(0, 3)])
    else:
        conn.execute("UPDATE s SET y = CASE WHEN y IS NULL THEN 2 ELSE NULL END WHERE c = %s", [rng.randint(0, 5)])


@pytest.mark.parametrize("refresh", ["immediate", "deferred"])
@pytest.mark.parametrize("label", list(QUERIES))
def test_conditions_hold_after_every_statement(conn: psycopg.Connection, dsn: str, label: str, refresh: str) -> None:
    conn.execute(SETUP)
    rng = random.Random(f"{label}:{refresh}")
    for _ in range(40):
        _statement(conn, rng)
    query = QUERIES[label]
    # the listing's CASE reads both tables: a condition on the join result, which no view tree takes
    systems = (["first-order"] if label == "listing" else ["fivm", "first-order"]) + (
        ["recompute"] if refresh == "immediate" else [])
    options = {"refresh": "deferred", "budget": 4} if refresh == "deferred" else {}
    for system in systems:
        command.create(f"v_{system.replace('-', '_')}", query, system=system, target=dsn, **options)
    before = {s: conn.execute(f"SELECT * FROM v_{s.replace('-', '_')}").fetchall() for s in systems}
    for step in range(50):
        _statement(conn, rng)
        for system in systems:
            name = f"v_{system.replace('-', '_')}"
            diff = conn.execute(f"(SELECT * FROM {name} EXCEPT ALL ({query})) UNION ALL "
                                f"(({query}) EXCEPT ALL SELECT * FROM {name})").fetchall()
            assert diff == [], f"{system} {label} step {step}: {diff[:3]}"
    for system in systems:
        name = f"v_{system.replace('-', '_')}"
        assert conn.execute(f"SELECT * FROM {name}").fetchall() != before[system] or label == "count"
        assert command.verify(name, target=dsn).ok
    assert conn.execute(f"SELECT count(*) FROM ({query}) q").fetchone()[0] > 0  # the conditions let rows through


@pytest.mark.parametrize(("condition", "words"), [
    ("random() < 0.5", ["random()", "changes with time or chance"]),
    ("public.f(r.a) > 0", ["public.f", "not supported"]),
    ("r.d > now()", ["now()", "changes with time or chance"]),
    ("r.d > clock_timestamp()", ["clock_timestamp()", "changes with time or chance"]),
    ("r.a::mood = 'x'", ["type mood"]),
])
def test_what_a_condition_may_not_call_is_refused_in_one_line(conn: psycopg.Connection, dsn: str, condition: str,
                                                             words: list[str]) -> None:
    conn.execute(SETUP)
    conn.execute("CREATE FUNCTION public.f(int) RETURNS int LANGUAGE sql AS 'SELECT $1'")
    with pytest.raises(PgivmError) as info:
        command.create("v", f"SELECT count(*) FROM r JOIN s ON r.b = s.b WHERE {condition}", target=dsn)
    message = str(info.value)
    assert "\n" not in message and len(message) < 200 and all(w in message for w in words), message
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgivm_v'").fetchone()[0] == 0


@pytest.mark.parametrize(("query", "words"), [
    ("SELECT r.a, now() AS n FROM r", ["now()", "changes with time or chance"]),
    ("SELECT r.a, 1 + random() AS x FROM r", ["random()", "changes with time or chance"]),
    ("SELECT date_trunc('day', r.t) AS d, count(*) AS n FROM r GROUP BY 1", ["is stable", "AT TIME ZONE 'UTC'"]),
    ("SELECT r.a, array_agg(r.b) AS bs FROM r GROUP BY r.a", ["ARRAY_AGG", "bool_or, with FILTER"]),
])
def test_values_of_time_chance_and_session_are_refused_under_200_characters(
        conn: psycopg.Connection, dsn: str, query: str, words: list[str]) -> None:
    """The held-out review of stop 57: now() was named CURRENT_TIMESTAMP, and the lines for now(),
    a session-dependent date_trunc and array_agg ran to 205-315 characters or named what was accepted
    two stops ago."""
    conn.execute("CREATE TABLE r (a int, b int, t timestamptz)")
    with pytest.raises(PgivmError) as info:
        command.create("v", query, target=dsn)
    line = f"pgivm: error: {info.value}"  # as the CLI prints it (the hint in parentheses)
    assert "\n" not in line and len(line) < 200 and all(w in line for w in words), line


NEGATED = {  # each spelling of a negated or symmetric test, in WHERE and in the SELECT list
    "not like": "SELECT r.a, r.name FROM r WHERE r.name NOT LIKE 'a%'",
    "not ilike": "SELECT r.a, r.name FROM r WHERE r.name NOT ILIKE 'B%'",
    "!~~": "SELECT r.a, r.name FROM r WHERE r.name !~~ 'e%' AND r.name !~~* 'A_'",
    "not of not like": "SELECT r.a, r.name FROM r WHERE NOT (r.name NOT LIKE '%b%')",
    "between symmetric": "SELECT r.a, r.b FROM r WHERE r.a BETWEEN SYMMETRIC 3 AND 1",
    "not between symmetric": "SELECT r.a, r.b FROM r WHERE r.a NOT BETWEEN SYMMETRIC 3 AND 1",
    "in the select list": ("SELECT r.a, r.name NOT LIKE 'a%' AS nl, r.b BETWEEN SYMMETRIC 2 AND 0 AS bs "
                           "FROM r WHERE r.name IS NOT NULL"),
    # refused before, seen by the fuzzer: IS [NOT] DISTINCT FROM, the simple CASE, substr(x, n)
    "is distinct from": ("SELECT r.a, r.b, r.a IS NOT DISTINCT FROM r.b AS same FROM r "
                         "WHERE r.a IS DISTINCT FROM 2 AND r.name IS NOT DISTINCT FROM 'bob' OR r.a IS NULL"),
    "simple case": "SELECT r.a, CASE r.b WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END AS word FROM r",
    "substr": ("SELECT r.a, substr(r.name, 2) AS tail, substring(r.name FROM 1 FOR 1) AS head FROM r "
               "WHERE substr(r.name, 1, 1) <> 'e'"),
    # listed in scalar.FUNCTIONS but read by sqlglot as constructs of their own: refused before
    "string functions": ("SELECT r.a, left(r.name, 1) AS l, right(r.name, 2) AS rt, replace(r.name, 'b', 'B') AS rp, "
                         "strpos(r.name, 'o') AS p, btrim(r.name, 'b') AS bt, ltrim(r.name, 'a') AS lt, "
                         "rtrim(r.name) AS rtr, trunc(r.a / 3.0, 1) AS t FROM r "
                         "WHERE starts_with(r.name, 'b') OR trunc(r.a * 0.5) = 1"),
    # refused before, seen by a held-out review: immutable string, array and date functions of PostgreSQL's
    "more string functions": ("SELECT r.a, initcap(r.name) AS ic, reverse(r.name) AS rv, md5(r.name) AS h, "
                              "translate(r.name, 'ab', 'AB') AS tr, octet_length(r.name) AS ol, "
                              "split_part(r.name || '-' || r.a::text, '-', 2) AS sp, lpad(r.name, 4, '*') AS lp, "
                              "rpad(r.name, 4) AS rp, repeat(r.name, 2) AS rep, regexp_replace(r.name, '[ae]', '_', 'g') AS rx, "
                              "cardinality(ARRAY[r.a, r.b]) AS card, array_length(ARRAY[r.a], 1) AS al FROM r "
                              "WHERE split_part(r.name, 'e', 1) <> 'b' OR reverse(r.name) LIKE 'n%'"),
    "date functions": ("SELECT r.a, make_date(2024, 1 + abs(r.b) % 12, 1) AS md, age(r.d::timestamp, TIMESTAMP '2024-01-01') AS ag, "
                       "justify_days(INTERVAL '1 day' * (r.d - DATE '2024-01-01')) AS jd, "
                       "justify_hours(INTERVAL '30 hours') AS jh, justify_interval(INTERVAL '40 days') AS ji FROM r "
                       "WHERE r.d IS NOT NULL AND r.b IS NOT NULL"),
}


@pytest.mark.parametrize("label", list(NEGATED))
def test_negated_like_and_symmetric_between_after_every_statement(conn: psycopg.Connection, dsn: str,
                                                                  label: str) -> None:
    """``x NOT LIKE p`` (and ``!~~``) keeps its NOT, ``BETWEEN SYMMETRIC`` its SYMMETRIC; ``IS [NOT]
    DISTINCT FROM``, the simple CASE and ``substr`` are maintained as PostgreSQL evaluates them."""
    conn.execute(SETUP)
    rng = random.Random(label)
    for _ in range(30):
        _statement(conn, rng)
    query = NEGATED[label]
    systems = ["fivm", "first-order", "recompute"]
    for system in systems:
        command.create(f"v_{system.replace('-', '_')}", query, system=system, target=dsn)
    seen = set()
    for step in range(30):
        _statement(conn, rng)
        expected = sorted(conn.execute(query).fetchall(), key=repr)
        seen.add(repr(expected))
        for system in systems:
            got = sorted(conn.execute(f"SELECT * FROM v_{system.replace('-', '_')}").fetchall(), key=repr)
            assert got == expected, (system, label, step)
    assert len(seen) > 3


def test_a_function_refused_in_the_select_list_is_named_as_written(conn: psycopg.Connection, dsn: str) -> None:
    """Not with the hidden outputs the SELECT list's computations read (pgivm_shown."pgivm_e2")."""
    conn.execute(SETUP)
    with pytest.raises(PgivmError) as info:
        command.create("v", "SELECT r.a, concat(r.name, 'x') AS k FROM r", target=dsn)
    assert "CONCAT(r.name, 'x') is not supported" in info.value.message and "pgivm_" not in info.value.message, \
        info.value.message

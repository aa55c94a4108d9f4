"""SELECT DISTINCT (issue 22): a listing's rows each once, and aggregates' rows each once, under
fivm, first-order and recompute, immediate and deferred, after every statement against PostgreSQL
(duplicates inserted and deleted one copy at a time, so a row stays while any copy joins); the
view's row count as status reports it; DISTINCT ON and a sample of DISTINCT refused in one line.
"""

from __future__ import annotations

import random

import psycopg
import pytest

from pgivm import command
from pgivm.errors import PgivmError

QUERIES = {
    "listing": "SELECT DISTINCT r.a, s.c FROM r JOIN s ON r.b = s.b",
    "listing with a condition": "SELECT DISTINCT s.c FROM r JOIN s ON r.b = s.b WHERE r.a % 2 = 0",
    "aggregates": "SELECT DISTINCT count(*) AS n, sum(r.a) AS sa FROM r JOIN s ON r.b = s.b GROUP BY s.c",
    # grouped by a value of one table, and by the columns of a value of two (shown as computed on read)
    "computed": "SELECT DISTINCT r.a % 2 AS odd, s.c FROM r JOIN s ON r.b = s.b",
    "computed across tables": "SELECT DISTINCT r.a + s.c AS t, s.b FROM r JOIN s ON r.b = s.b",
}


def _write(conn: psycopg.Connection, rng: random.Random) -> None:
    table = rng.choice(["r", "s"])
    if rng.random() < 0.6:
        row = [rng.randint(0, 3), rng.randint(0, 2)]
        conn.execute(f"INSERT INTO {table} VALUES (%s, %s), (%s, %s)", row + row)  # two copies of a row
    elif rng.random() < 0.8:  # one copy of a row: its join results stay, with one multiplicity less
        conn.execute(f"DELETE FROM {table} WHERE ctid = (SELECT ctid FROM {table} ORDER BY random() LIMIT 1)")
    else:
        conn.execute(f"UPDATE {table} SET b = (b + 1) % 3 WHERE ctid = (SELECT ctid FROM {table} LIMIT 1)"
                     if table == "r" else "UPDATE s SET c = (c + 1) % 4 WHERE ctid = (SELECT ctid FROM s LIMIT 1)")


@pytest.mark.parametrize("refresh", ["immediate", "deferred"])
@pytest.mark.parametrize("label", list(QUERIES))
def test_distinct_rows_after_every_statement(conn: psycopg.Connection, dsn: str, label: str, refresh: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    conn.execute("SELECT setseed(0.25)")  # ORDER BY random() in the writes: the same stream each run
    rng = random.Random(f"{label}:{refresh}")
    for _ in range(20):
        _write(conn, rng)
    query = QUERIES[label]
    systems = ["fivm", "first-order"] + (["recompute"] if refresh == "immediate" else [])
    options = {"refresh": "deferred", "budget": 4} if refresh == "deferred" else {}
    for system in systems:
        command.create(f"v_{system.replace('-', '_')}", query, system=system, target=dsn, **options)
    seen = set()
    for step in range(40):
        _write(conn, rng)
        expected = conn.execute(query).fetchall()
        assert len(expected) == len(set(expected))
        seen.add(len(expected))
        for system in systems:
            name = f"v_{system.replace('-', '_')}"
            shown = conn.execute(f"SELECT * FROM {name}").fetchall()
            assert sorted(shown) == sorted(expected), (system, step)
            if step % 10 == 9:
                assert command.status(name, target=dsn).count == len(expected)
    assert len(seen) > 1
    for system in systems:
        assert command.verify(f"v_{system.replace('-', '_')}", target=dsn).ok


@pytest.mark.parametrize(("sql", "system", "words"), [
    ("SELECT DISTINCT ON (r.a) r.a, s.c FROM r JOIN s ON r.b = s.b", None, ["DISTINCT ON"]),
    ("SELECT DISTINCT r.a, s.c FROM r JOIN s ON r.b = s.b", "sample", ["DISTINCT"]),
])
def test_what_distinct_cannot_be_is_refused(conn: psycopg.Connection, dsn: str, sql: str, system: str | None,
                                            words: list[str]) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    conn.execute("SELECT setseed(0.25)")  # ORDER BY random() in the writes: the same stream each run
    with pytest.raises(PgivmError) as info:
        command.create("v", sql, system=system, size=3, target=dsn) if system else command.create("v", sql, target=dsn)
    assert "\n" not in str(info.value) and all(w in str(info.value) for w in words), str(info.value)


def test_reading_a_distinct_view_reads_its_rows_not_the_join(conn: psycopg.Connection, dsn: str) -> None:
    """A DISTINCT that projects the join column away keeps one row per distinct result (grouped):
    F-IVM made its kept listing distinct on every read, reading the whole join (here 20,000 rows for
    the 14 rows shown)."""
    from pgivm.bench.coverage import _ROWS_READ

    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    conn.execute("INSERT INTO r SELECT g % 7, g % 100 FROM generate_series(1, 20000) g; "
                 "INSERT INTO s SELECT g, g % 2 FROM generate_series(0, 99) g")
    query = "SELECT DISTINCT r.a, s.c FROM r JOIN s ON r.b = s.b"
    for system in ("fivm", "first-order"):
        command.create("v", query, system=system, target=dsn)
        with conn.transaction():
            before = conn.execute(_ROWS_READ).fetchone()[0]  # type: ignore[index]
            shown = conn.execute("SELECT * FROM v").fetchall()
            read = conn.execute(_ROWS_READ).fetchone()[0] - before  # type: ignore[index]
        assert sorted(shown) == sorted(conn.execute(query).fetchall()) and len(shown) == 14
        assert read <= 100, (system, read)
        command.drop("v", target=dsn)


def test_a_distinct_of_rows_defaults_to_first_order_and_explain_says_the_order(conn: psycopg.Connection, dsn: str) -> None:
    """The default is the first system, in the order of expected speed, that takes the query; for a
    DISTINCT of rows first-order comes before fivm (measured: docs/benchmarks.md), for a DISTINCT
    with aggregates the registry's order stands."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    rows = command.create("v", "SELECT DISTINCT r.a % 10 AS k, s.c FROM r JOIN s ON r.b = s.b", target=dsn)
    grouped = command.create("w", "SELECT DISTINCT s.c, count(*) FROM r JOIN s ON r.b = s.b GROUP BY s.c", target=dsn)
    assert (rows.system, grouped.system) == ("first-order", "fivm")
    lines = command.explain("v", target=dsn)
    assert lines[2] == "system: first-order, the default for this query (systems are tried fastest first: " \
                       "ivme, first-order, fivm, recompute, sample)", lines
    assert "ivme, fivm, first-order" in command.explain("w", target=dsn)[2]

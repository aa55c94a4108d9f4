"""One SQL statement that writes several base tables of a view (issue 22; found by a differential
fuzzer): a foreign key's ON DELETE / ON UPDATE CASCADE, a data-modifying WITH, INSERT ... ON CONFLICT
DO UPDATE and MERGE (inserts and updates of one table), and a user's trigger that writes another
table. Each write fires its own statement trigger, and the first of them already sees every
table changed: first-order counted the changes' cross term twice, or lost the cascade. After each
statement every view equals PostgreSQL's own evaluation of its SQL."""

from __future__ import annotations

import psycopg
import pytest

from pgivm import command

VIEWS = {
    "inner": ("SELECT r.a, s.c FROM r JOIN s ON r.a = s.b", "first-order", "immediate"),
    "grouped": ("SELECT r.b, count(*) AS n, min(s.c) AS lo, sum(s.c) AS total FROM r JOIN s ON r.a = s.b GROUP BY r.b",
                "first-order", "immediate"),
    "three": ("SELECT r.a, s.c, t.d FROM r JOIN s ON r.a = s.b JOIN t ON t.c = s.c", "first-order", "immediate"),
    "left": ("SELECT r.a, s.c FROM r LEFT JOIN s ON r.a = s.b", "first-order", "immediate"),
    "not_exists": ("SELECT r.a FROM r WHERE NOT EXISTS (SELECT 1 FROM s WHERE s.b = r.a)", "first-order", "immediate"),
    "fivm": ("SELECT r.b, count(*) AS n FROM r JOIN s ON r.a = s.b GROUP BY r.b", "fivm", "immediate"),
    "deferred": ("SELECT r.a, s.c FROM r JOIN s ON r.a = s.b", "first-order", "deferred"),
    # one atom: each write applied at once, no statement counted in (the delta of the one atom is the whole)
    "one_table": ("SELECT r.b, min(r.a) AS lo, count(*) AS n FROM r GROUP BY r.b", "first-order", "immediate"),
}
STATEMENTS = [
    "DELETE FROM r WHERE a = 2",  # cascades to s
    "UPDATE r SET a = 5 WHERE a = 1",  # cascades to s
    "WITH x AS (INSERT INTO r VALUES (7, 3) RETURNING 1) INSERT INTO s VALUES (7, 30), (3, 20)",
    "INSERT INTO r VALUES (3, 9), (8, 8) ON CONFLICT (a) DO UPDATE SET b = EXCLUDED.b",
    "MERGE INTO r USING (VALUES (5, 2), (9, 9)) AS v(x, y) ON r.a = v.x "
    "WHEN MATCHED THEN UPDATE SET b = v.y WHEN NOT MATCHED THEN INSERT (a, b) VALUES (v.x, v.y)",
    "INSERT INTO r VALUES (11, 1)",  # the user's trigger adds s (11, 10)
    "WITH d AS (DELETE FROM s WHERE b = 7 RETURNING 1) DELETE FROM r WHERE a IN (7, 11)",
    "BEGIN; DELETE FROM r WHERE a = 3; SAVEPOINT x; DELETE FROM r WHERE a = 5; ROLLBACK TO x; COMMIT",
]


def _differences(conn: psycopg.Connection, name: str, query: str) -> list[tuple[object, ...]]:
    return conn.execute(f"(SELECT * FROM {name} EXCEPT ALL ({query})) UNION ALL "
                        f"(({query}) EXCEPT ALL SELECT * FROM {name})").fetchall()


@pytest.mark.parametrize("view", list(VIEWS))
def test_a_statement_that_writes_several_tables_is_maintained_exactly(conn: psycopg.Connection, view: str) -> None:
    query, system, refresh = VIEWS[view]
    conn.execute("CREATE TABLE r (a int PRIMARY KEY, b int); "
                 "CREATE TABLE s (b int REFERENCES r (a) ON DELETE CASCADE ON UPDATE CASCADE, c int); "
                 "CREATE TABLE t (c int, d int)")
    conn.execute("CREATE FUNCTION add_s() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                 "INSERT INTO s SELECT n.a, 10 FROM new_rows n WHERE n.a = 11; RETURN NULL; END $$; "
                 "CREATE TRIGGER add_s AFTER INSERT ON r REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION add_s()")
    conn.execute("INSERT INTO r VALUES (1, 1), (2, 2), (3, 1); INSERT INTO s VALUES (1, 10), (2, 20), (2, 21), (3, 10); "
                 "INSERT INTO t VALUES (10, 1), (20, 2), (30, 3)")
    command.create("v", query, system=system, refresh=refresh, target=conn)
    started = conn.execute("SELECT * FROM v").fetchall()
    for statement in STATEMENTS:
        conn.execute(statement)  # type: ignore[arg-type]
        assert _differences(conn, "v", query) == [], statement
    assert sorted(conn.execute("SELECT * FROM v").fetchall(), key=repr) != sorted(started, key=repr)
    assert command.verify("v", target=conn).ok


def test_verify_names_a_statement_count_left_open(conn: psycopg.Connection) -> None:
    """Every committed statement counted itself in and out; a count left over would make every later
    write wait for a statement that never ends (the view would stop changing): verify says so."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); INSERT INTO r VALUES (1, 1)")
    command.create("v", "SELECT r.a, s.c FROM r JOIN s ON r.b = s.b", system="first-order", target=conn)
    assert command.verify("v", target=conn).ok
    conn.execute("UPDATE pgivm_v.state SET statements_open = 1")
    report = command.verify("v", target=conn)
    assert [f.check for f in report.failures] == ["no_statement_left_open"]


PARTITIONED_VIEWS = {
    # a self-join: a0's delta query reads a1 as it was, a1's reads a0 as it is now
    "self_join": ("SELECT count(*) AS total, sum(a1.y) AS sy FROM r a0 JOIN r a1 ON a0.k2 = a1.k1 "
                  "JOIN s ON a1.k2 = s.k1", "first-order", "immediate"),
    "self_join_listing": ("SELECT a0.k1, a1.k2, s.k2 AS sk FROM r a0 JOIN r a1 ON a0.k2 = a1.k1 "
                          "JOIN s ON a1.k2 = s.k1", "first-order", "immediate"),
    "left": ("SELECT a0.k1, a1.y FROM r a0 LEFT JOIN r a1 ON a0.k2 = a1.k1", "first-order", "immediate"),
    "not_exists": ("SELECT r.k1, r.y FROM r WHERE NOT EXISTS (SELECT 1 FROM s WHERE s.k1 = r.k2)",
                   "first-order", "immediate"),
    "deferred": ("SELECT count(*) AS total, sum(a1.y) AS sy FROM r a0 JOIN r a1 ON a0.k2 = a1.k1 "
                 "JOIN s ON a1.k2 = s.k1", "first-order", "deferred"),
    "fivm": ("SELECT s.k2, count(*) AS n FROM r JOIN s ON r.k2 = s.k1 GROUP BY s.k2", "fivm", "immediate"),
    "one_table": ("SELECT r.k2, min(r.y) AS lo, count(*) AS n FROM r GROUP BY r.k2", "first-order", "immediate"),
}
TRUNCATES = [
    "TRUNCATE r_low",  # one partition of a self-joined table
    "INSERT INTO r SELECT g % 4, (g / 4) % 4, g FROM generate_series(30, 40) g",
    "TRUNCATE r_high, s_odd",  # partitions of both tables in one statement
    "INSERT INTO r SELECT g % 4, (g / 3) % 4, g FROM generate_series(50, 70) g; "
    "INSERT INTO s SELECT g % 4, g % 3 FROM generate_series(1, 7) g",
    "TRUNCATE r_low, t",  # a partition and a plain table (t is in no view: only the statement's shape)
    "BEGIN; TRUNCATE r_high; ROLLBACK",
    "TRUNCATE r",  # the partitioned table: each partition's rows go
    "INSERT INTO r SELECT g % 4, (g / 2) % 4, g FROM generate_series(1, 16) g",
    "TRUNCATE s",
]


@pytest.mark.parametrize("view", list(PARTITIONED_VIEWS))
def test_truncate_of_partitions_is_maintained_exactly(conn: psycopg.Connection, view: str) -> None:
    """TRUNCATE of a partition takes its rows away as a deletion, read by a BEFORE trigger while the
    table still holds them: first-order applied it there, and a self-join's later atom read the
    rows going as its new state (the view kept triangles of deleted rows). Now it is applied once
    they are gone."""
    query, system, refresh = PARTITIONED_VIEWS[view]
    conn.execute("CREATE TABLE r (k1 int, k2 int, y int) PARTITION BY RANGE (k1); "
                 "CREATE TABLE r_low PARTITION OF r FOR VALUES FROM (MINVALUE) TO (2); "
                 "CREATE TABLE r_high PARTITION OF r DEFAULT; "
                 "CREATE TABLE s (k1 int, k2 int) PARTITION BY LIST (k2); "
                 "CREATE TABLE s_even PARTITION OF s FOR VALUES IN (0, 2); CREATE TABLE s_odd PARTITION OF s DEFAULT; "
                 "CREATE TABLE t (x int)")
    conn.execute("INSERT INTO r SELECT g % 4, (g / 4) % 4, g FROM generate_series(1, 24) g; "
                 "INSERT INTO s SELECT g % 4, g % 3 FROM generate_series(1, 12) g")
    command.create("v", query, system=system, refresh=refresh, target=conn)
    for statement in TRUNCATES:
        before = sorted(conn.execute(f"{query}").fetchall(), key=repr)
        conn.execute(statement)  # type: ignore[arg-type]
        assert _differences(conn, "v", query) == [], statement
        if statement.startswith("TRUNCATE") and statement != "TRUNCATE s":
            assert sorted(conn.execute(f"{query}").fetchall(), key=repr) != before or view == "not_exists", statement
    assert command.verify("v", target=conn).ok


def _partitioned_view(conn: psycopg.Connection) -> None:
    """r partitioned by b (1, and the rest), three rows, and a first-order view of it."""
    conn.execute("CREATE TABLE r (a int, b int) PARTITION BY LIST (b); "
                 "CREATE TABLE r_p1 PARTITION OF r FOR VALUES IN (1); CREATE TABLE r_pd PARTITION OF r DEFAULT; "
                 "INSERT INTO r VALUES (1, 1), (2, 1), (3, 2)")
    command.create("v", "SELECT r.a, r.b FROM r", system="first-order", target=conn)


def test_an_update_moving_a_row_to_another_partition_is_maintained(conn: psycopg.Connection) -> None:
    _partitioned_view(conn)
    conn.execute("UPDATE r SET b = 2 WHERE a = 1")
    conn.execute("UPDATE r SET b = 1 WHERE a = 3")
    assert sorted(conn.execute("SELECT * FROM v").fetchall()) == [(1, 2), (2, 1), (3, 1)]


@pytest.mark.xfail(strict=True, reason="known bug, PostgreSQL's transition tables: a MERGE whose UPDATE action moves a "
                   "row to another partition leaves the UPDATE tables empty, and the DELETE and INSERT ones hold the "
                   "move only if the MERGE has such actions (found by the differential fuzzer; recompute is right)")
def test_a_merge_moving_a_row_to_another_partition_is_maintained(conn: psycopg.Connection) -> None:
    _partitioned_view(conn)
    conn.execute("MERGE INTO r USING (VALUES (1, 2)) AS src(x, y) ON r.a = src.x WHEN MATCHED THEN UPDATE SET b = src.y")
    assert sorted(conn.execute("SELECT * FROM v").fetchall()) == [(1, 2), (2, 1), (3, 2)]


def test_only_a_view_of_several_atoms_counts_its_statements(conn: psycopg.Connection) -> None:
    """A first-order view of one atom applies each write at once: no BEFORE trigger counting the
    statement in, and none of the functions that count (45_statements.sql) in its state."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    command.create("one", "SELECT r.b, sum(r.a) FROM r GROUP BY r.b", system="first-order", target=conn)
    command.create("two", "SELECT r.b, count(*) FROM r JOIN s ON r.b = s.b GROUP BY r.b", system="first-order", target=conn)
    counting = ("SELECT count(*) FROM pg_proc WHERE pronamespace = %s::regnamespace "
                "AND proname IN ('statement_open', 'apply_pending', 'statement_close')")
    assert conn.execute(counting, ["pgivm_one"]).fetchone() == (0,)
    assert conn.execute(counting, ["pgivm_two"]).fetchone() == (3,)
    assert conn.execute("SELECT count(*) FROM pg_trigger WHERE tgname = 'pgivm_one_open'").fetchone() == (0,)
    conn.execute("INSERT INTO r VALUES (1, 2), (3, 2); DELETE FROM r WHERE a = 1")
    assert conn.execute("SELECT * FROM one").fetchall() == [(2, 3)]

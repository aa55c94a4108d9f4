"""DDL on base tables: each change is either followed (the view keeps working) or refused by
pgivm's event triggers with one line naming the view and what to do.

Followed: renaming a base table or moving it to another schema (tables are pinned by oid),
renaming or adding columns the view does not read, a new empty partition (it gets the capture
triggers), detaching an empty partition. Refused: renaming, retyping or dropping a column the
view reads, dropping a base table, disabling or dropping a capture trigger, dropping the state
schema by hand, inheritance, row-level security, attaching or detaching a partition with rows; a
rule, trigger or row-level security on the view the user reads or on a table of its state.
"""

from __future__ import annotations

import psycopg
import pytest

from conftest import TRIANGLE_SQL
from pgivm import command


def setup_view(conn: psycopg.Connection, strategy: str = "ivme", partitioned: bool = False) -> None:
    if partitioned:
        conn.execute("CREATE TABLE r (a int, b int, note text) PARTITION BY RANGE (a);"
                     "CREATE TABLE r_low PARTITION OF r FOR VALUES FROM (0) TO (10)")
    else:
        conn.execute("CREATE TABLE r (a int, b int, note text)")
    conn.execute("CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    conn.execute("INSERT INTO r VALUES (1, 2), (2, 3); INSERT INTO s VALUES (2, 3), (3, 1); INSERT INTO t VALUES (3, 1), (1, 2)")
    command.create("tri", TRIANGLE_SQL, system=strategy, target=conn)


def count(conn: psycopg.Connection) -> int:
    return conn.execute("SELECT * FROM tri").fetchone()[0]


def assert_verified(conn: psycopg.Connection) -> None:
    report = command.verify("tri", target=conn)
    assert report.ok, (report.maintained, report.recount, [str(f) for f in report.failures])


def refused(conn: psycopg.Connection, ddl: str, *words: str) -> str:
    """Run ``ddl``: it must fail with pgivm's message naming the view and each of ``words``."""
    with pytest.raises(psycopg.Error) as caught:
        conn.execute(ddl)
    message = str(caught.value).splitlines()[0]
    assert message.startswith("pgivm: "), message
    assert "tri" in message
    for word in words:
        assert word in message, message
    return message


@pytest.mark.parametrize("strategy", ["ivme", "first-order", "recompute"])
def test_renamed_table_and_schema_are_followed(conn: psycopg.Connection, strategy: str) -> None:
    setup_view(conn, strategy)
    conn.execute("ALTER TABLE r RENAME TO r_renamed")
    conn.execute("CREATE SCHEMA moved; ALTER TABLE s SET SCHEMA moved")
    conn.execute("ALTER TABLE r_renamed RENAME COLUMN note TO remark; ALTER TABLE r_renamed ADD COLUMN extra int")
    conn.execute("INSERT INTO r_renamed (a, b) VALUES (1, 2); INSERT INTO moved.s VALUES (2, 3)")
    conn.execute("DELETE FROM t WHERE c = 3 AND a = 1 AND ctid = (SELECT min(ctid) FROM t WHERE c = 3)")
    conn.execute("INSERT INTO t VALUES (3, 1), (3, 1)")
    assert_verified(conn)
    conn.execute("TRUNCATE moved.s")
    assert count(conn) == 0
    assert_verified(conn)
    assert [str(t) for t in command.tables_of("tri", target=conn)] == ["public.r_renamed", "moved.s", "public.t"]


@pytest.mark.parametrize("ddl,words", [
    ("ALTER TABLE r RENAME COLUMN b TO bb", ("column b", "renamed to bb", "pgivm drop tri")),
    ("ALTER TABLE r ALTER COLUMN b TYPE bigint", ("column b", "changed type", "pgivm drop tri")),
    ("ALTER TABLE r DROP COLUMN a", ("column", "read by pgivm view tri", "pgivm drop tri")),
    ("DROP TABLE s", ("base table of pgivm view tri", "pgivm drop tri")),
    ("ALTER TABLE r DISABLE TRIGGER pgivm_tri_insert", ("disabled", "ENABLE TRIGGER")),
    ("ALTER TABLE r DISABLE TRIGGER ALL", ("disabled",)),
    ("DROP TRIGGER pgivm_tri_delete ON r", ("pgivm_tri_delete", "pgivm drop tri")),
    ("ALTER TRIGGER pgivm_tri_update ON r RENAME TO other", ("missing", "pgivm_tri_update")),
    ("DROP SCHEMA pgivm_tri CASCADE", ("pgivm drop tri",)),
    ("CREATE TABLE r_child () INHERITS (r)", ("inheritance",)),
    ("CREATE TABLE parent_of_s (b int, c int); ALTER TABLE s INHERIT parent_of_s", ("inheritance",)),
    ("ALTER TABLE t ENABLE ROW LEVEL SECURITY", ("row-level security",)),
])
def test_breaking_ddl_is_refused(conn: psycopg.Connection, ddl: str, words: tuple[str, ...]) -> None:
    setup_view(conn)
    before = count(conn)
    refused(conn, ddl, *words)
    # Nothing changed: the view is still maintained and exact.
    conn.execute("INSERT INTO r VALUES (1, 2); INSERT INTO s VALUES (2, 3)")
    assert count(conn) > before
    assert_verified(conn)


@pytest.mark.parametrize("ddl,words", [
    ("CREATE RULE quiet AS ON INSERT TO tri DO INSTEAD NOTHING", ("rule quiet on public.tri", "not made by pgivm")),
    ("CREATE FUNCTION public.noop() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END';"
     "CREATE TRIGGER quiet INSTEAD OF INSERT ON tri FOR EACH ROW EXECUTE FUNCTION public.noop()",
     ("trigger quiet on public.tri", "not made by pgivm")),
    ("CREATE FUNCTION public.noop() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END';"
     "CREATE TRIGGER quiet AFTER UPDATE ON pgivm_tri.state FOR EACH ROW EXECUTE FUNCTION public.noop()",
     ("trigger quiet on pgivm_tri.state", "not made by pgivm")),
    # (a policy alone runs nothing while row-level security is off, which the guard keeps off)
    ("CREATE POLICY quiet ON pgivm_tri.state USING (true); ALTER TABLE pgivm_tri.state ENABLE ROW LEVEL SECURITY",
     ("pgivm_tri.state has row-level security enabled",)),
])
def test_code_attached_to_the_view_or_its_state_is_refused(conn: psycopg.Connection, ddl: str, words: tuple[str, ...]) -> None:
    """The DDL guard's second half: a rule, trigger or policy on the view the user reads or on a
    table of its state (what another role reading the view or writing a base table would run) is
    refused, and nothing of it is left."""
    setup_view(conn)
    refused(conn, ddl, *words)
    assert conn.execute("SELECT count(*) FROM pg_rewrite WHERE rulename = 'quiet'").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM pg_trigger WHERE tgname = 'quiet'").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM pg_policy WHERE polname = 'quiet'").fetchone()[0] == 0
    conn.execute("INSERT INTO r VALUES (1, 2); INSERT INTO s VALUES (2, 3)")
    assert_verified(conn)


def test_dropping_the_view_lets_the_ddl_through(conn: psycopg.Connection) -> None:
    setup_view(conn)
    refused(conn, "ALTER TABLE r RENAME COLUMN b TO bb")
    command.drop("tri", target=conn)
    conn.execute("ALTER TABLE r RENAME COLUMN b TO bb; DROP TABLE s")
    assert conn.execute("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'pgivm%'").fetchone()[0] == 0


def test_new_partitions_get_the_triggers(conn: psycopg.Connection) -> None:
    setup_view(conn, partitioned=True)
    conn.execute("CREATE TABLE r_mid PARTITION OF r FOR VALUES FROM (10) TO (20) PARTITION BY HASH (b)")
    conn.execute("CREATE TABLE r_mid0 PARTITION OF r_mid FOR VALUES WITH (MODULUS 2, REMAINDER 0)")
    conn.execute("CREATE TABLE r_mid1 PARTITION OF r_mid FOR VALUES WITH (MODULUS 2, REMAINDER 1)")
    conn.execute("CREATE TABLE r_other (LIKE r); ALTER TABLE r ATTACH PARTITION r_other FOR VALUES FROM (20) TO (30)")
    conn.execute("INSERT INTO s VALUES (12, 3), (13, 3), (22, 3); INSERT INTO t VALUES (3, 11), (3, 21)")
    conn.execute("INSERT INTO r_mid0 SELECT 11, b FROM generate_series(12, 13) b WHERE satisfies_hash_partition("
                 "'r_mid'::regclass, 2, 0, b)")  # straight into a second-level partition
    conn.execute("INSERT INTO r VALUES (11, 12), (11, 13), (21, 22)")
    conn.execute("INSERT INTO r_other VALUES (21, 22)")
    assert_verified(conn)
    conn.execute("TRUNCATE r_mid1")
    conn.execute("UPDATE r SET a = 21, b = 22 WHERE a = 11")  # moves rows into the attached partition
    assert_verified(conn)
    assert count(conn) > 0


def test_partitions_with_rows_cannot_come_or_go_unseen(conn: psycopg.Connection) -> None:
    setup_view(conn, partitioned=True)
    conn.execute("CREATE TABLE r_full (LIKE r); INSERT INTO r_full VALUES (15, 2)")
    refused(conn, "ALTER TABLE r ATTACH PARTITION r_full FOR VALUES FROM (10) TO (20)", "with rows", "insert its rows through")
    conn.execute("INSERT INTO r VALUES (5, 2)")
    refused(conn, "ALTER TABLE r DETACH PARTITION r_low", "detached with rows")
    refused(conn, "DROP TABLE r_low", "unseen", "detach it first")
    assert_verified(conn)
    conn.execute("DELETE FROM r_low")  # maintained: the rows leave the view now
    conn.execute("ALTER TABLE r DETACH PARTITION r_low")  # empty: allowed, and it loses the triggers
    assert conn.execute("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'r_low'::regclass AND tgname LIKE 'pgivm%'").fetchone()[0] == 0
    conn.execute("INSERT INTO r_low VALUES (1, 2)")  # no longer part of the view
    conn.execute("DROP TABLE r_low")
    assert_verified(conn)


def test_a_base_table_cannot_become_a_partition(conn: psycopg.Connection) -> None:
    setup_view(conn)
    conn.execute("CREATE TABLE big_t (c int, a int) PARTITION BY RANGE (c)")
    refused(conn, "ALTER TABLE big_t ATTACH PARTITION t FOR VALUES FROM (0) TO (100)", "became a partition")
    assert_verified(conn)


def test_verify_reports_drift_the_event_triggers_did_not_stop(conn: psycopg.Connection) -> None:
    """Without the event triggers (a catalog made by a non-superuser has none), verify says what changed."""
    setup_view(conn)
    conn.execute("ALTER EVENT TRIGGER pgivm_ddl_command_end DISABLE")
    try:
        conn.execute("ALTER TABLE r DISABLE TRIGGER pgivm_tri_insert")
        report = command.verify("tri", target=conn)
        assert not report.ok
        assert any("disabled" in str(f) for f in report.failures), [str(f) for f in report.failures]
        conn.execute("ALTER TABLE r ENABLE TRIGGER pgivm_tri_insert")
        conn.execute("ALTER TABLE r RENAME COLUMN b TO bb")
        report = command.verify("tri", target=conn)
        assert not report.ok
        assert any("renamed to bb" in str(f) for f in report.failures), [str(f) for f in report.failures]
    finally:
        conn.execute("ALTER EVENT TRIGGER pgivm_ddl_command_end ENABLE")


@pytest.mark.parametrize("ddl,words", [
    ("ALTER TABLE s RENAME COLUMN c TO cc", ("column c", "renamed to cc", "pgivm drop other", "it breaks pgivm view tri too")),
    ("ALTER TABLE s ALTER COLUMN c TYPE bigint", ("column c", "changed type", "it breaks pgivm view tri too")),
    ("ALTER TABLE s DROP COLUMN c", ("column public.s.c", "read by pgivm views other, tri", "pgivm drop other; pgivm drop tri")),
    ("DROP TABLE s", ("public.s is a base table of pgivm views other, tri", "drop them first", "pgivm drop other; pgivm drop tri")),
])
def test_a_refusal_names_every_view_it_would_break(conn: psycopg.Connection, ddl: str, words: tuple[str, ...]) -> None:
    """Two views read s.c: the one error names both (the user drops what it names, and no second
    refusal follows), the first line and, for a rename or retype, each view's problem in DETAIL."""
    setup_view(conn)
    command.create("other", "SELECT s.b, sum(s.c) AS total FROM s GROUP BY s.b", target=conn)
    with pytest.raises(psycopg.Error) as caught:
        conn.execute(ddl)
    message = str(caught.value).splitlines()[0]
    for word in words:
        assert word in message, message
    detail = caught.value.diag.message_detail or ""
    if "DROP" not in ddl:
        assert "read by pgivm view tri" in detail and "read by pgivm view other" in detail, detail
    command.drop("tri", target=conn)
    command.drop("other", target=conn)
    conn.execute(ddl)  # nothing left to break

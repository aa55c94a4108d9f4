"""Upgrading a database made by pgivm's first version: `pgivm init` migrates the catalog in place
(views still maintained afterwards), and `pgivm upgrade` reinstalls the views' functions and
triggers from the current templates with their state kept.

tests/data/catalog_v1.sql.gz is a plain pg_dump of a database built by the version-1 code
(commit 2c7cc3f; see tests/data/README.md): tables r, s, t and e, and four views over them
(ivme at ε = 0.5, first-order, recompute, and ivme at ε = 0.25 over the edge self-join), after
some maintained writes.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from pgivm import command
from pgivm.catalog.views import set_template_version
from pgivm.errors import PgivmError

DUMP = Path(__file__).resolve().parents[1] / "data" / "catalog_v1.sql.gz"
VIEWS = ["edges", "tri_fo", "tri_ivme", "tri_rc"]


def psql() -> str:
    found = shutil.which("psql")
    if found:
        return found
    from pgivm.server import EmbeddedServer

    bundled = EmbeddedServer(Path("/nonexistent")).client_program("psql")
    if bundled is None:
        pytest.skip("no psql on PATH or bundled with the embedded server: cannot restore the v1 dump")
    return str(bundled)


def restore_v1(dsn: str) -> None:
    version = psycopg.connect(dsn).info.server_version
    if version < 180000:
        pytest.skip("the v1 dump was made by pg_dump 18 (transaction_timeout, \\restrict): needs PostgreSQL 18")
    script = gzip.decompress(DUMP.read_bytes())
    params = conninfo_to_dict(dsn)
    run = subprocess.run([psql(), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dsn], input=script,
                         capture_output=True, timeout=120, env=None)
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    assert params  # the DSN was usable by psql


def verify_all(conn: psycopg.Connection, outdated: bool = False) -> None:
    """Every view equals its recount; ``outdated``: views still on version-1 functions, whose state
    verify reports as unsafe for other roles (their functions are not SECURITY DEFINER) until
    `upgrade` reinstalls them, and nothing else."""
    unsafe = 0
    for name in VIEWS:
        report = command.verify(name, target=conn)
        failures = [f for f in report.failures if not (outdated and f.check == "state_safe_for_other_roles")]
        assert report.maintained == report.recount and not failures, \
            (name, report.maintained, report.recount, [str(f) for f in report.failures])
        unsafe += not report.ok
    assert not outdated or unsafe >= 3, "verify did not report the version-1 functions that are not SECURITY DEFINER"


def write_some(conn: psycopg.Connection, step: int) -> None:
    """Writes that change every view's count (checked to differ from before)."""
    before = {name: conn.execute(f"SELECT * FROM {name}").fetchone()[0] for name in VIEWS}
    conn.execute("INSERT INTO r SELECT a, b FROM r WHERE a %% 5 = %s LIMIT 40", [step % 5])
    conn.execute("DELETE FROM s WHERE b = %s", [step % 7])
    conn.execute("INSERT INTO t SELECT c, a + 1 FROM t LIMIT 30")
    conn.execute("INSERT INTO e VALUES (%s, %s), (%s, %s), (%s, %s)", [1, 50 + step, 50 + step, 2, 2, 1])
    after = {name: conn.execute(f"SELECT * FROM {name}").fetchone()[0] for name in VIEWS}
    assert all(before[n] != after[n] for n in VIEWS), (before, after)


@pytest.mark.empty_database
def test_v1_database_upgrades_in_place(dsn: str, conn: psycopg.Connection) -> None:
    restore_v1(dsn)
    assert conn.execute("SELECT max(version) FROM pgivm.schema_migrations").fetchone()[0] == 1  # where v1 kept it
    counts = {name: conn.execute(f"SELECT * FROM {name}").fetchone()[0] for name in VIEWS}
    assert counts == {"edges": 3351, "tri_fo": 2214, "tri_ivme": 2214, "tri_rc": 2214}  # as the v1 code left them

    result = command.init(target=conn)
    assert result.applied == ["0002_base_tables_by_oid", "0003_systems", "0004_refresh", "0005_trusted_catalog",
                              "0006_catalog_without_jit", "0007_restore_lock_writes",
                              "0008_stopped_views", "0009_enum_columns_in_state", "0010_covers_closed",
                              "0011_ddl_guard_names_every_view", "0012_objects_list_the_view",
                              "0013_pin_state_refuses_old_snapshots", "0014_state_views_read_base_tables",
                              "0015_statement_open_trigger", "0016_truncated_trigger",
                              "0017_derived_tables", "0018_nested_derived_tables",
                              "0019_types_of_users_and_extensions", "0020_packed_variable_types", "0021_faster_event_triggers",
                              "0022_recompute_refresh_after_derived", "0023_user_collations_in_state"]
    assert conn.execute("SELECT to_regnamespace('pgivm')").fetchone()[0] is None  # renamed: pg_ivm may use the name
    assert sorted(result.outdated) == VIEWS
    # The catalog v2: systems, parameters (ε only in the state), base tables by oid.
    rows = conn.execute("SELECT name, system, params FROM pgivm_catalog.views ORDER BY name").fetchall()
    assert rows == [("edges", "ivme", {"batch_threshold": 384}), ("tri_fo", "first-order", {"batch_threshold": 384}),
                    ("tri_ivme", "ivme", {"batch_threshold": 384}), ("tri_rc", "recompute", {})]
    assert conn.execute("SELECT count(*) FROM pgivm_catalog.base_tables").fetchone()[0] == 10  # 3 + 3 + 3 + 1
    assert {v.name: v.params.get("epsilon") for v in command.list_views(target=conn)} == {
        "edges": 0.25, "tri_fo": None, "tri_ivme": 0.5, "tri_rc": None}

    # Still maintained by the version-1 functions, before any upgrade.
    verify_all(conn, outdated=True)
    write_some(conn, 1)
    verify_all(conn, outdated=True)

    for name in VIEWS:
        upgraded = command.upgrade(name, target=conn)
        assert upgraded.upgraded
    assert command.init(target=conn).outdated == []
    assert not command.upgrade("tri_ivme", target=conn).upgraded  # current now: nothing to do
    verify_all(conn)
    # The reinstalled functions: fixed search_path everywhere, no base table read by name on TRUNCATE.
    unfixed = conn.execute(
        "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname LIKE 'pgivm\\_%' AND n.nspname <> 'pgivm_catalog' AND NOT coalesce(p.proconfig::text LIKE '%search_path=pg_catalog, pg_temp%', false)"
    ).fetchall()
    assert unfixed == []
    assert conn.execute("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                        "WHERE n.nspname LIKE 'pgivm\\_%' AND c.relpersistence = 'u'").fetchone()[0] == 0
    for step in range(2, 4):
        write_some(conn, step)
        verify_all(conn)
    conn.execute("TRUNCATE s")
    conn.execute("TRUNCATE e")
    verify_all(conn)
    assert {name: conn.execute(f"SELECT * FROM {name}").fetchone()[0] for name in VIEWS} == {
        "edges": 0, "tri_fo": 0, "tri_ivme": 0, "tri_rc": 0}


def test_upgrade_keeps_the_state(conn: psycopg.Connection) -> None:
    """`upgrade --force` of a current view reinstalls functions and triggers; the state tables and
    the count are the same objects and values afterwards."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    conn.execute("INSERT INTO r SELECT g % 7, g % 5 FROM generate_series(1, 200) g;"
                 "INSERT INTO s SELECT g % 5, g % 3 FROM generate_series(1, 200) g;"
                 "INSERT INTO t SELECT g % 3, g % 7 FROM generate_series(1, 200) g")
    command.create("tri", "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a",
                   epsilon=0.25, target=conn)
    tables = conn.execute("SELECT c.oid FROM pg_class c WHERE c.relnamespace = 'pgivm_tri'::regnamespace "
                          "AND c.relkind = 'r' ORDER BY 1").fetchall()
    before = conn.execute("SELECT * FROM tri").fetchone()[0]
    state = conn.execute("SELECT epsilon, n, theta, db_size FROM pgivm_tri.state").fetchone()
    assert command.upgrade("tri", force=True, target=conn).upgraded
    assert conn.execute("SELECT c.oid FROM pg_class c WHERE c.relnamespace = 'pgivm_tri'::regnamespace "
                        "AND c.relkind = 'r' ORDER BY 1").fetchall() == tables
    assert conn.execute("SELECT * FROM tri").fetchone()[0] == before
    assert conn.execute("SELECT epsilon, n, theta, db_size FROM pgivm_tri.state").fetchone() == state
    conn.execute("INSERT INTO r VALUES (1, 1), (2, 2); DELETE FROM t WHERE c = 1")
    report = command.verify("tri", target=conn)
    assert report.ok, [str(f) for f in report.failures]
    assert report.maintained != before


REBUILT = {  # one view per system, and the state layers beside them (derived tables, constant rows)
    "tri": ("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a", {"epsilon": 0.25}),
    "sums": ("SELECT r.a, sum(n.x) AS s, avg(n.x) AS m, count(*) AS c FROM r JOIN n ON r.b = n.b GROUP BY r.a", {"system": "fivm"}),
    "extremes": ("SELECT r.a, max(n.x) AS top, sum(n.x) AS s FROM r JOIN n ON r.b = n.b GROUP BY r.a", {"system": "first-order"}),
    "whole": ("SELECT r.a, count(*) AS c FROM r JOIN s ON r.b = s.b GROUP BY r.a", {"system": "recompute"}),
    "sampled": ("SELECT r.a, s.c FROM r JOIN s ON r.b = s.b", {"system": "sample", "size": 5}),
    "shares": ("SELECT r.a, count(*) AS c FROM r WHERE r.b IN (SELECT b FROM s GROUP BY b HAVING count(*) > 30) "
               "GROUP BY r.a", {}),
    "series": ("SELECT g.v, count(*) AS c FROM r JOIN generate_series(0, 3) AS g(v) ON r.b = g.v GROUP BY g.v", {}),
}


def test_upgrade_rebuild_lays_out_every_systems_state_afresh(conn: psycopg.Connection) -> None:
    """`upgrade --rebuild` (for a state an earlier pgivm laid out otherwise) drops what each system
    laid out, lays it out and builds it again from the base tables: every view then equals its
    recount through later writes, its parameters, the user view's grants and a view a user built on
    it stay. Where the state no longer fits the templates (simulated: a column of the numeric sum's
    state gone), upgrade refuses in one line naming --rebuild and changes nothing."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int);"
                 "CREATE TABLE n (b int, x numeric)")
    conn.execute("INSERT INTO r SELECT g % 7, g % 5 FROM generate_series(1, 200) g;"
                 "INSERT INTO s SELECT g % 5, g % 3 FROM generate_series(1, 200) g;"
                 "INSERT INTO t SELECT g % 3, g % 7 FROM generate_series(1, 200) g;"
                 "INSERT INTO n SELECT g % 5, g * 1.5 FROM generate_series(1, 50) g")
    for name, (query, options) in REBUILT.items():
        command.create(name, query, target=conn, **options)
    conn.execute("DROP ROLE IF EXISTS pgivm_t_reader; CREATE ROLE pgivm_t_reader; GRANT SELECT ON sums TO pgivm_t_reader;"
                 "CREATE VIEW on_top AS SELECT sum(s) AS total FROM sums")
    gone = conn.execute("SELECT table_name, column_name FROM information_schema.columns "
                        "WHERE table_schema = 'pgivm_sums' AND column_name LIKE 'p%specials'").fetchall()
    assert gone
    for table, column in gone:  # as an earlier pgivm laid it out: numeric sums not classified
        conn.execute(f"ALTER TABLE pgivm_sums.{table} RENAME COLUMN {column} TO gone_{column}")
    with pytest.raises(PgivmError, match="--rebuild") as info:
        command.upgrade("sums", force=True, target=conn)
    assert "\n" not in str(info.value) and "specials" in info.value.message
    assert conn.execute("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'pgivm_sums' "
                        "AND column_name LIKE 'p%specials'").fetchone()[0] == 0  # nothing changed
    set_template_version(conn, "sums", "0" * 16)  # as installed by that earlier pgivm
    with pytest.raises(PgivmError, match="--rebuild") as info:  # verify says what to do, not PostgreSQL's error
        command.verify("sums", target=conn)
    assert "\n" not in str(info.value) and "earlier pgivm laid its state out otherwise" in info.value.message
    laid_out = "SELECT count(*) FROM pg_class WHERE relnamespace = 'pgivm_tri'::regnamespace AND oid < %s"
    newest = conn.execute("SELECT max(oid::int8) + 1 FROM pg_class").fetchone()[0]
    assert conn.execute(laid_out, [newest]).fetchone()[0] > 0
    for name in REBUILT:
        assert command.upgrade(name, rebuild=True, target=conn).rebuilt
    assert conn.execute(laid_out, [newest]).fetchone()[0] == 0  # every relation of the state made again
    assert conn.execute("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'pgivm_sums' "
                        "AND column_name LIKE '%specials'").fetchone()[0] == len(gone)  # as the templates lay it out
    assert conn.execute("SELECT epsilon FROM pgivm_tri.state").fetchone()[0] == 0.25
    assert conn.execute("SELECT has_table_privilege('pgivm_t_reader', 'sums', 'SELECT')").fetchone()[0]
    for step in range(3):
        conn.execute("INSERT INTO r SELECT a + %s, b FROM r WHERE a = %s", [step, step])
        conn.execute("DELETE FROM s WHERE c = %s", [step])
        conn.execute("INSERT INTO n VALUES (%s, 'NaN'), (%s, %s)", [step, step + 1, step * 7])
        conn.execute("DELETE FROM n WHERE x = 'NaN' AND b = %s", [step])
        for name in REBUILT:
            report = command.verify(name, target=conn)
            assert report.ok, (name, [str(f) for f in report.failures])
    assert conn.execute("SELECT total FROM on_top").fetchone()[0] == conn.execute("SELECT sum(s) FROM sums").fetchone()[0]
    conn.execute("DROP VIEW on_top; DROP OWNED BY pgivm_t_reader; DROP ROLE pgivm_t_reader")


def test_upgrade_rebuild_refuses_a_deferred_view(conn: psycopg.Connection) -> None:
    conn.execute("CREATE TABLE r (a int, b int); INSERT INTO r VALUES (1, 2)")
    command.create("d", "SELECT r.a, count(*) AS c FROM r GROUP BY r.a", refresh="deferred", target=conn)
    with pytest.raises(PgivmError, match="--refresh immediate"):
        command.upgrade("d", rebuild=True, target=conn)

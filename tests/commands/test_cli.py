"""The ``pgivm`` command line, end to end against a real PostgreSQL database.

Every command runs in-process through ``pgivm.cli.main([... , "--dsn", dsn])``; capsys gives what
it printed. Expected values are computed with plain SQL on the same database (the recount of the
view definition, the number of distinct tuples, the catalogs), never copied from pgivm itself.
Exit codes: 0 success, 1 ``verify`` found a difference, 2 a user error printed as one
``pgivm: error: ...`` line on stderr, without a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from conftest import EDGE_SQL, TRIANGLE_SQL
from pgivm import __version__
from pgivm import cli as pgivm_cli
from pgivm import server as pgivm_server
from pgivm.catalog import migrate
from pgivm.cli import build_parser, main

COMMANDS = ["init", "create", "load", "validate", "drop", "list", "status", "verify", "explain", "regress", "refresh", "calibrate", "worker", "rebalance", "alter", "sample", "upgrade",
            "demo", "bench", "psql", "server"]
ROBERT = "Robert'); DROP"
UNREACHABLE = "host=127.0.0.1 port=1 connect_timeout=2"


# ------------------------------------------------------------------------------------------ helpers


@dataclass
class Run:
    code: int
    out: str
    err: str


def cli(capsys: pytest.CaptureFixture[str], dsn: str, *args: str) -> Run:
    capsys.readouterr()  # drop anything printed before
    code = main(["--dsn", dsn, *args])
    captured = capsys.readouterr()
    return Run(code, captured.out, captured.err)


def ok(capsys: pytest.CaptureFixture[str], dsn: str, *args: str) -> Run:
    run = cli(capsys, dsn, *args)
    assert run.code == 0, f"pgivm {' '.join(args)} exited {run.code}\nstdout: {run.out}\nstderr: {run.err}"
    assert "Traceback" not in run.err
    return run


def assert_user_error(run: Run, *words: str) -> str:
    """Exit 2, nothing on stdout, and exactly one line on stderr: ``pgivm: error: ...``."""
    assert run.code == 2, f"exit {run.code}\nstdout: {run.out}\nstderr: {run.err}"
    assert "Traceback" not in run.err
    assert run.out == ""
    lines = [line for line in run.err.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr: {lines}"
    message = lines[0]
    assert message.startswith("pgivm: error: "), run.err
    for word in words:
        assert word.lower() in message.lower(), f"{word!r} not in {message!r}"
    return message


def scalar(conn: psycopg.Connection, query: Any, params: Any = None) -> Any:
    row = conn.execute(query, params).fetchone()
    assert row is not None
    return row[0]


def distinct_pairs(conn: psycopg.Connection, table: str, first: str, second: str) -> int:
    return scalar(
        conn,
        sql.SQL("SELECT count(*) FROM (SELECT DISTINCT {f}, {s} FROM {t} WHERE {f} IS NOT NULL AND {s} IS NOT NULL) d").format(
            f=sql.Identifier(first), s=sql.Identifier(second), t=sql.Identifier(table)
        ),
    )


def distinct_firsts(conn: psycopg.Connection, table: str, first: str, second: str) -> int:
    return scalar(
        conn,
        sql.SQL("SELECT count(DISTINCT {f}) FROM {t} WHERE {f} IS NOT NULL AND {s} IS NOT NULL").format(
            f=sql.Identifier(first), s=sql.Identifier(second), t=sql.Identifier(table)
        ),
    )


def rst_db_size(conn: psycopg.Connection) -> int:
    return distinct_pairs(conn, "r", "a", "b") + distinct_pairs(conn, "s", "b", "c") + distinct_pairs(conn, "t", "c", "a")


def view_value(conn: psycopg.Connection, view: str = "tri", schema: str = "public") -> Any:
    rows = conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(schema, view))).fetchall()
    assert len(rows) == 1 and len(rows[0]) == 1, rows
    return rows[0][0]


def load_rst(conn: psycopg.Connection, seed: int = 1, rows: int = 30) -> int:
    """r(a,b), s(b,c), t(c,a) with duplicates, a NULL row and a high-degree value; returns the recount."""
    conn.execute("CREATE TABLE r (a int, b int, note text); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    rng = random.Random(seed)
    for table in ("r", "s", "t"):
        data = [(rng.randrange(6), rng.randrange(6)) for _ in range(rows)]
        data += [(0, i) for i in range(8)]  # value 0 has a high degree in every relation
        data += [(1, None), (None, 2)]  # never joins
        with conn.cursor() as cur:
            cur.executemany(
                sql.SQL("INSERT INTO {} VALUES (%s, %s)").format(sql.Identifier(table)), data
            )
    expected = scalar(conn, TRIANGLE_SQL)
    assert expected > 0
    return expected


def some_dml_rst(conn: psycopg.Connection, seed: int = 2) -> None:
    """Inserts, deletes, join-column and other-column updates on all three tables."""
    rng = random.Random(seed)
    for table in ("r", "s", "t"):
        ident = sql.Identifier(table)
        with conn.cursor() as cur:
            cur.executemany(
                sql.SQL("INSERT INTO {} VALUES (%s, %s)").format(ident),
                [(rng.randrange(7), rng.randrange(7)) for _ in range(10)],
            )
        conn.execute(sql.SQL("DELETE FROM {t} WHERE ctid IN (SELECT ctid FROM {t} ORDER BY ctid LIMIT 5)").format(t=ident))
    conn.execute("UPDATE r SET b = b + 1 WHERE a = 2")
    conn.execute("UPDATE s SET c = 0 WHERE b = 3")
    conn.execute("UPDATE r SET note = 'touched'")  # not a join column


def status_json(capsys: pytest.CaptureFixture[str], dsn: str, name: str = "tri") -> dict[str, Any]:
    """``pgivm status --json``, with the system's figures (IVMε: epsilon, n, theta, db_size, ...)
    lifted to the top level and its relations section as {relation: {header: value}}."""
    info = json.loads(ok(capsys, dsn, "status", name, "--json").out)
    flat = {**info, **info["figures"]}
    for section in info["sections"]:
        flat[section["title"]] = {row[0]: dict(zip(section["headers"], row)) for row in section["rows"]}
    return flat


def user_triggers(conn: psycopg.Connection, *tables: str) -> list[str]:
    rows = conn.execute(
        "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgrelid = ANY(%s::regclass[]) ORDER BY tgname",
        [[sql.Identifier(t).as_string(conn) for t in tables]],
    ).fetchall()
    return [row[0] for row in rows]


def schema_exists(conn: psycopg.Connection, schema: str) -> bool:
    return bool(scalar(conn, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = %s)", [schema]))


# --------------------------------------------------------------------------------------------- help


def test_help_subprocess_lists_every_subcommand() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pgivm.cli", "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: pgivm")
    assert "Traceback" not in proc.stderr
    for command in COMMANDS:
        assert command in proc.stdout, f"{command} missing from --help"
    # and the list above is the parser's own list
    subparsers = next(a for a in build_parser()._actions if a.dest == "command")
    assert sorted(subparsers.choices) == sorted(COMMANDS)  # type: ignore[arg-type]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_subcommand_has_help(capsys: pytest.CaptureFixture[str], command: str) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: pgivm {command}")
    assert "-h, --help" in out
    assert len(out.splitlines()) >= 3


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(subparsers.choices)


def test_every_subcommand_and_option_has_help_text() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    described = {action.dest: action.help for action in subparsers._choices_actions}
    assert sorted(described) == sorted(COMMANDS)
    missing = [f"pgivm {name}" for name, text in described.items() if not (text and text.strip())]
    for prefix, p in [("pgivm", parser), *((f"pgivm {name}", p) for name, p in _subcommands().items())]:
        missing += [f"{prefix} {'/'.join(a.option_strings) or a.dest}"
                    for a in p._actions if not (a.help and a.help.strip() and a.help != argparse.SUPPRESS)]
    assert missing == [], f"no help text: {missing}"


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"server"}))
def test_dsn_is_accepted_before_and_after_every_command(command: str) -> None:
    """``pgivm status tri --dsn X`` as well as ``pgivm --dsn X status tri``; one after the command
    wins, and an absent one after the command leaves the one before it alone."""
    required = {"create": ["tri"], "load": ["r", "f.csv", "--columns", "a,b"], "validate": ["tri"], "drop": ["tri"],
                "status": ["tri"], "verify": ["tri"], "explain": ["tri"], "regress": ["tri", "--target", "x"], "rebalance": ["tri"], "alter": ["tri", "--epsilon", "0.3"],
                "sample": ["tri", "--fresh", "3"], "refresh": ["tri"], "calibrate": ["tri"]}
    rest = required.get(command, [])
    parser = build_parser()
    assert parser.parse_args([command, *rest]).dsn is None
    assert parser.parse_args(["--dsn", "host=before", command, *rest]).dsn == "host=before"
    assert parser.parse_args([command, *rest, "--dsn", "host=after"]).dsn == "host=after"
    assert parser.parse_args([command, "--dsn", "host=after", *rest]).dsn == "host=after"
    assert parser.parse_args(["--dsn", "host=before", command, *rest, "--dsn", "host=after"]).dsn == "host=after"


def test_dsn_after_the_command_reaches_the_database(
    capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection
) -> None:
    expected = load_rst(conn)
    capsys.readouterr()
    assert main(["create", "tri", "--sql", TRIANGLE_SQL, "--dsn", dsn]) == 0
    assert main(["status", "tri", "--dsn", dsn, "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out[out.index("{"):])["count"] == expected
    assert main(["--dsn", UNREACHABLE, "list", "--dsn", dsn]) == 0  # the one after the command wins
    assert "tri" in capsys.readouterr().out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"pgivm {__version__}"


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2
    assert "usage: pgivm" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------- init


@pytest.mark.empty_database
def test_init_twice_is_idempotent(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    assert scalar(conn, "SELECT to_regclass('pgivm_catalog.views')") is None
    first = ok(capsys, dsn, "init")
    assert "catalog migrations applied" in first.out
    assert "0001" in first.out and "0002" in first.out and "0003" in first.out
    assert scalar(conn, "SELECT to_regclass('pgivm_catalog.views')::text") == "pgivm_catalog.views"
    second = ok(capsys, dsn, "init")
    assert second.out.strip() == "catalog is up to date"
    assert scalar(conn, "SELECT count(*) FROM pgivm_catalog.schema_migrations") == len(migrate.available_migrations())


# ------------------------------------------------------------------------------------------- create


def test_create_with_sql(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    expected = load_rst(conn)
    db_size = rst_db_size(conn)
    run = ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    assert f"created view public.tri (ivme): count = {expected}, |D| = {db_size}," in run.out
    assert "read it from any SQL client: SELECT * FROM public.tri;" in run.out
    assert run.err == ""  # the build took less than SLOW_NOTE_AFTER_S: no progress line
    assert view_value(conn) == expected == scalar(conn, TRIANGLE_SQL)
    columns = conn.execute("SELECT * FROM tri").description
    assert columns is not None and [c.name for c in columns] == ["count"]

    # the view follows the base tables
    some_dml_rst(conn)
    assert view_value(conn) == scalar(conn, TRIANGLE_SQL)
    conn.execute("INSERT INTO r VALUES (4, 4), (4, 4)")
    conn.execute("INSERT INTO s VALUES (4, 5)")
    conn.execute("INSERT INTO t VALUES (5, 4)")
    assert view_value(conn) == scalar(conn, TRIANGLE_SQL)
    conn.execute("TRUNCATE s")
    assert view_value(conn) == 0 == scalar(conn, TRIANGLE_SQL)
    conn.execute("INSERT INTO s SELECT b, a FROM r WHERE a IS NOT NULL")
    assert view_value(conn) == scalar(conn, TRIANGLE_SQL)
    run = ok(capsys, dsn, "verify", "tri")
    assert "OK" in run.out


def test_create_with_file(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection, tmp_path: Path) -> None:
    expected = load_rst(conn, seed=5)
    view_sql = tmp_path / "tri.sql"
    view_sql.write_text(
        "-- the triangle count\nSELECT count(*) AS n\n  FROM r, s, t\n WHERE r.b = s.b AND s.c = t.c AND t.a = r.a;\n",
        encoding="utf-8",
    )
    run = ok(capsys, dsn, "create", "tri", "--file", str(view_sql), "--epsilon", "0.3")
    assert f"count = {expected}," in run.out
    assert scalar(conn, "SELECT n FROM tri") == expected
    assert status_json(capsys, dsn)["epsilon"] == pytest.approx(0.3)
    assert "OK" in ok(capsys, dsn, "verify", "tri", "--strict").out


def test_create_with_sum_1_over_empty_tables_is_null_like_sql(
    capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection
) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    view_sql = "SELECT sum(1) AS total FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a"
    ok(capsys, dsn, "create", "tri", "--sql", view_sql)
    assert scalar(conn, view_sql) is None
    assert scalar(conn, "SELECT total FROM tri") is None
    assert "OK" in ok(capsys, dsn, "verify", "tri", "--strict").out
    conn.execute("INSERT INTO r VALUES (1, 2); INSERT INTO s VALUES (2, 3); INSERT INTO t VALUES (3, 1)")
    assert scalar(conn, "SELECT total FROM tri") == 1 == scalar(conn, view_sql)
    conn.execute("DELETE FROM s")
    assert scalar(conn, "SELECT total FROM tri") is None
    assert "OK" in ok(capsys, dsn, "verify", "tri").out


def test_create_into_another_schema_over_schema_qualified_tables(
    capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection
) -> None:
    conn.execute('CREATE SCHEMA "Graph Data"; CREATE SCHEMA reports')
    conn.execute('CREATE TABLE "Graph Data".r (a int, b int); CREATE TABLE "Graph Data".s (b int, c int)')
    conn.execute('CREATE TABLE "Graph Data".t (c int, a int)')
    rng = random.Random(11)
    for table in ("r", "s", "t"):
        with conn.cursor() as cur:
            cur.executemany(
                sql.SQL("INSERT INTO {} VALUES (%s, %s)").format(sql.Identifier("Graph Data", table)),
                [(rng.randrange(5), rng.randrange(5)) for _ in range(25)],
            )
    view_sql = (
        'SELECT count(*) FROM "Graph Data".r JOIN "Graph Data".s ON r.b = s.b '
        'JOIN "Graph Data".t ON s.c = t.c AND t.a = r.a'
    )
    expected = scalar(conn, view_sql)
    run = ok(capsys, dsn, "create", "tri", "--sql", view_sql, "--schema", "reports")
    assert f"created view reports.tri (ivme): count = {expected}," in run.out
    assert view_value(conn, "tri", "reports") == expected
    assert scalar(conn, "SELECT to_regclass('public.tri')") is None
    conn.execute('INSERT INTO "Graph Data".r VALUES (1, 1), (2, 2); DELETE FROM "Graph Data".t WHERE c = 3')
    assert view_value(conn, "tri", "reports") == scalar(conn, view_sql)
    assert "OK" in ok(capsys, dsn, "verify", "tri").out
    ok(capsys, dsn, "drop", "tri")
    assert scalar(conn, "SELECT to_regclass('reports.tri')") is None
    assert user_triggers(conn) == []
    assert scalar(conn, """SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal""") == 0


# --------------------------------------------------------------------------------------------- list


def test_list_table_and_json(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    run = ok(capsys, dsn, "list")
    assert "no pgivm views" in run.out
    assert json.loads(ok(capsys, dsn, "list", "--json").out) == []

    expected = load_rst(conn)
    ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    ok(capsys, dsn, "create", "another", "--sql", TRIANGLE_SQL.replace("count(*)", "count(1) AS k"), "--epsilon", "0.75")

    table = ok(capsys, dsn, "list").out.splitlines()
    assert table[0].split() == ["name", "view", "system", "parameters", "result", "definition"]
    assert set(table[1]) <= {"-", " "}
    rows = {line.split()[0]: line for line in table[2:]}
    assert set(rows) == {"tri", "another"}
    assert rows["tri"].split()[:7] == ["tri", "public.tri", "ivme", "batch_threshold=384,epsilon=0.5,partitions=single", "count", "=",
                                       str(expected)]
    assert rows["tri"].endswith(TRIANGLE_SQL)
    assert rows["another"].split()[:7] == ["another", "public.another", "ivme", "batch_threshold=384,epsilon=0.75,partitions=single",
                                           "count", "=", str(expected)]

    listed = json.loads(ok(capsys, dsn, "list", "--json").out)
    assert [v["name"] for v in listed] == ["another", "tri"]
    tri = listed[1]
    assert tri == {
        "name": "tri",
        "view": "public.tri",
        "system": "ivme",
        "params": {"epsilon": 0.5, "partitions": "single", "batch_threshold": 384},
        "count": expected,
        "definition": TRIANGLE_SQL,
        "counts": "count",
    }
    conn.execute("INSERT INTO r SELECT a, b FROM r")  # doubles every triangle
    listed = json.loads(ok(capsys, dsn, "list", "--json").out)
    assert [v["count"] for v in listed] == [2 * expected, 2 * expected]


# ------------------------------------------------------------------------------------------- status

STATUS_KEYS = {"epsilon", "n", "theta", "db_size", "relations", "tables", "major_rebalances", "minor_rebalances"}


def test_status_table_and_json(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    expected = load_rst(conn)
    db_size = rst_db_size(conn)
    ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)

    info = status_json(capsys, dsn)
    assert STATUS_KEYS <= set(info)
    assert info["epsilon"] == 0.5
    assert info["db_size"] == db_size
    assert info["n"] == 2 * db_size + 1  # the build sets N = 2|D| + 1
    assert info["theta"] == pytest.approx(math.sqrt(info["n"]))
    assert info["count"] == expected
    assert info["major_rebalances"] >= 1 and info["minor_rebalances"] == 0
    assert info["name"] == "tri" and info["view"] == "public.tri" and info["system"] == "ivme"
    assert info["params"] == {"epsilon": 0.5, "partitions": "single", "batch_threshold": 384} and info["problems"] == []
    assert set(info["relations"]) == {"R", "S", "T"}
    for relation, (table, first, second) in {"R": ("r", "a", "b"), "S": ("s", "b", "c"), "T": ("t", "c", "a")}.items():
        rel = info["relations"][relation]
        assert rel["values"] == distinct_firsts(conn, table, first, second), relation
        assert rel["heavy tuples"] + rel["light tuples"] == distinct_pairs(conn, table, first, second), relation
        assert 0 <= rel["heavy values"] <= rel["values"]
    # value 0 has degree >= 8 >= theta in every relation only if theta <= 8; check against theta instead
    r_heavy = scalar(
        conn,
        "SELECT count(*) FROM (SELECT a FROM (SELECT DISTINCT a, b FROM r WHERE a IS NOT NULL AND b IS NOT NULL) d "
        "GROUP BY a HAVING count(*) >= %s) h",
        [info["theta"]],
    )
    assert info["relations"]["R"]["heavy values"] == r_heavy  # strict partition right after the build
    tables = {t["table"]: t for t in info["tables"]}
    assert {"state", "result", "r_heavy", "r_light", "r_degree", "v_rs", "v_st", "v_tr"} <= set(tables)
    assert tables["result"]["rows"] == 1 and tables["state"]["rows"] == 1
    assert tables["r_light"]["rows"] == info["relations"]["R"]["light tuples"]
    assert all(t["bytes"] > 0 for t in info["tables"])

    text = ok(capsys, dsn, "status", "tri").out
    lines = text.splitlines()
    assert lines[0].startswith("view public.tri (ivme): ") and TRIANGLE_SQL in lines[0]
    header = lines[1]
    for word in ("count", "epsilon", "N", "theta", "|D|", "major rebalances", "minor rebalances"):
        assert word in header
    values = lines[3].split()
    assert values[0] == str(expected) and values[1] == "0.5" and values[2] == str(2 * db_size + 1)
    assert values[4] == str(db_size)
    assert any(line.split()[:2] == ["R", str(info["relations"]["R"]["values"])] for line in lines)
    assert any(line.startswith("relation") for line in lines)
    assert any(line.startswith("state table") for line in lines)
    assert any(line.split()[:2] == ["result", "1"] for line in lines)


# ------------------------------------------------------------------------------------------- verify


def test_verify_ok_and_strict_right_after_create(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    expected = load_rst(conn)
    ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    run = ok(capsys, dsn, "verify", "tri")
    assert f"maintained: {expected}" in run.out and f"recount:    {expected}" in run.out
    assert "OK: tri" in run.out
    assert "MISMATCH" not in run.out and "invariant violated" not in run.out
    run = ok(capsys, dsn, "verify", "tri", "--strict")
    assert "OK: tri" in run.out
    some_dml_rst(conn)
    run = ok(capsys, dsn, "verify", "tri")
    assert f"maintained: {scalar(conn, TRIANGLE_SQL)}" in run.out


def test_verify_detects_a_corrupted_count(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    expected = load_rst(conn)
    ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    conn.execute("UPDATE pgivm_tri.result SET count = count + 1")
    assert view_value(conn) == expected + 1
    run = cli(capsys, dsn, "verify", "tri")
    assert run.code == 1, run
    assert f"maintained: {expected + 1}" in run.out
    assert f"recount:    {expected}" in run.out
    assert "MISMATCH" in run.out and "+1" in run.out
    assert "OK" not in run.out
    assert "invariant violated: count_from_state" in run.out


@pytest.mark.parametrize(
    ("corruption", "check"),
    [
        pytest.param(
            "DELETE FROM pgivm_tri.r_degree WHERE ctid = (SELECT min(ctid) FROM pgivm_tri.r_degree)",
            "R.degrees",
            id="degree-row-deleted",
        ),
        pytest.param(
            "UPDATE pgivm_tri.t_light SET mult = mult + 1 WHERE ctid = (SELECT min(ctid) FROM pgivm_tri.t_light)",
            "T.parts_match_base",
            id="multiplicity-changed",
        ),
        pytest.param("INSERT INTO pgivm_tri.v_rs VALUES (100, 100, 3)", "R.auxiliary_view", id="auxiliary-row-added"),
        pytest.param("UPDATE pgivm_tri.state SET theta = theta + 1", "threshold", id="theta-changed"),
        pytest.param("UPDATE pgivm_tri.state SET db_size = db_size + 1", "size_invariant", id="db-size-changed"),
    ],
)
def test_verify_names_a_violated_invariant(
    capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection, corruption: str, check: str
) -> None:
    expected = load_rst(conn)
    ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    assert scalar(conn, "SELECT count(*) FROM pgivm_tri.t_light") > 0
    conn.execute(corruption)
    run = cli(capsys, dsn, "verify", "tri")
    assert run.code == 1, run
    assert f"invariant violated: {check}" in run.out
    assert f"maintained: {expected}" in run.out and f"recount:    {expected}" in run.out
    assert "MISMATCH" not in run.out  # the count itself is right
    assert "OK" not in run.out



def test_verify_of_a_first_order_triangle_names_the_relation_whose_copy_drifted(
        capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    """first-order's copy of each relation against its base table (grouped on both sides together,
    not FULL JOINed, so that an extension's equality that is not merge-joinable can be checked)."""
    expected = load_rst(conn)
    ok(capsys, dsn, "create", "tri", "--system", "first-order", "--sql", TRIANGLE_SQL)
    conn.execute("UPDATE pgivm_tri.s_tuples SET mult = mult + 1 WHERE ctid = (SELECT min(ctid) FROM pgivm_tri.s_tuples)")
    conn.execute("DELETE FROM pgivm_tri.t_tuples WHERE ctid = (SELECT min(ctid) FROM pgivm_tri.t_tuples)")
    run = cli(capsys, dsn, "verify", "tri")
    assert run.code == 1, run
    assert "invariant violated: S.tuples_match_base" in run.out and "invariant violated: T.tuples_match_base" in run.out
    assert "R.tuples_match_base" not in run.out and f"recount:    {expected}" in run.out


def test_explain_names_the_class_of_a_count_over_three_relations(capsys: pytest.CaptureFixture[str], dsn: str,
                                                                conn: psycopg.Connection) -> None:
    """IVMε's Appendix H: the triangle is 3R³ and the path r-s-t 3R², ivme running each class's
    strategy (the default for both), each with the paper's bounds; a GROUP BY has no class."""
    load_rst(conn)
    ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    ok(capsys, dsn, "create", "p3", "--sql", "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c")
    ok(capsys, dsn, "create", "g", "--sql", "SELECT r.a, count(*) AS n FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c GROUP BY r.a")
    tri = cli(capsys, dsn, "explain", "tri").out
    assert "IVMε class (Kara et al., Appendix H): 3R³ (cyclic;" in tri and "ivme runs this class's strategy" in tri
    path = cli(capsys, dsn, "explain", "p3").out
    assert "3R² (acyclic, not hierarchical; variables two of them share: r.b of r and s; s.c of s and t)" in path
    assert "amortized update O(|D|^max{ε,1−ε})" in path and "ivme runs this class's strategy" in path
    assert "3-path count, class 3R² (Kara et al., long version, Appendix H.3" in path
    assert "IVMε class" not in cli(capsys, dsn, "explain", "g").out

# ---------------------------------------------------------------------------------- rebalance, alter


def test_rebalance(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    expected = load_rst(conn)
    ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    some_dml_rst(conn)
    expected = scalar(conn, TRIANGLE_SQL)
    before = status_json(capsys, dsn)
    run = ok(capsys, dsn, "rebalance", "tri")
    assert run.out.startswith("rebalance tri: ")
    assert f"count = {expected}" in run.out
    assert view_value(conn) == expected
    after = status_json(capsys, dsn)
    assert after["major_rebalances"] == before["major_rebalances"] + 1
    assert after["count"] == expected
    assert after["theta"] == pytest.approx(after["n"] ** after["epsilon"])
    assert "OK" in ok(capsys, dsn, "verify", "tri", "--strict").out


@pytest.mark.parametrize("epsilon", [0.25, 0.0, 1.0])
def test_alter_epsilon(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection, epsilon: float) -> None:
    expected = load_rst(conn)
    ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    run = ok(capsys, dsn, "alter", "tri", "--epsilon", str(epsilon))
    assert f"epsilon = {epsilon}" in run.out and f"count = {expected}" in run.out
    info = status_json(capsys, dsn)
    assert info["epsilon"] == epsilon
    assert info["theta"] == pytest.approx(info["n"] ** epsilon)
    assert info["count"] == expected
    assert json.loads(ok(capsys, dsn, "list", "--json").out)[0]["params"]["epsilon"] == epsilon
    assert scalar(conn, "SELECT epsilon FROM pgivm_tri.state") == epsilon  # where epsilon lives: the state row
    if epsilon == 0.0:  # everything is heavy
        assert all(r["light tuples"] == 0 for r in info["relations"].values())
    assert "OK" in ok(capsys, dsn, "verify", "tri", "--strict").out
    some_dml_rst(conn)
    assert view_value(conn) == scalar(conn, TRIANGLE_SQL)
    assert "OK" in ok(capsys, dsn, "verify", "tri").out


# --------------------------------------------------------------------------------------------- drop


def test_drop_removes_view_state_and_triggers(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    expected = load_rst(conn)
    conn.execute("CREATE FUNCTION keep() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END'")
    conn.execute("CREATE TRIGGER users_own AFTER INSERT ON r FOR EACH ROW EXECUTE FUNCTION keep()")
    rows_before = {t: scalar(conn, sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(t))) for t in "rst"}
    ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    assert len(user_triggers(conn, "r", "s", "t")) == 3 * 5 + 1  # lock, insert, delete, update, truncate per table, plus the user's own
    assert schema_exists(conn, "pgivm_tri")

    run = ok(capsys, dsn, "drop", "tri")
    assert run.out.strip() == "dropped tri"
    assert scalar(conn, "SELECT to_regclass('public.tri')") is None
    assert not schema_exists(conn, "pgivm_tri")
    assert user_triggers(conn, "r", "s", "t") == ["users_own"]
    assert scalar(conn, "SELECT count(*) FROM pg_proc WHERE proname LIKE '%%apply_%%' OR proname LIKE 'on_write%%'") == 0
    assert scalar(conn, "SELECT count(*) FROM pgivm_catalog.views") == 0
    # base tables untouched and still writable
    assert {t: scalar(conn, sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(t))) for t in "rst"} == rows_before
    assert scalar(conn, TRIANGLE_SQL) == expected
    conn.execute("INSERT INTO r VALUES (1, 1); DELETE FROM s WHERE b = 1; TRUNCATE t")
    assert "no pgivm views" in ok(capsys, dsn, "list").out
    # the name is free again
    ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    assert view_value(conn) == 0 == scalar(conn, TRIANGLE_SQL)


# ------------------------------------------------------------------------------- self-join edge form


def test_edge_table_self_join(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    conn.execute("CREATE TABLE e (src int, dst int)")
    rng = random.Random(3)
    edges = [(rng.randrange(8), rng.randrange(8)) for _ in range(40)]
    edges += [(0, 1), (1, 2), (2, 0), (0, 1), (5, 5)]  # a triangle, a duplicate edge, a self-loop
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO e VALUES (%s, %s)", edges)
    expected = scalar(conn, EDGE_SQL)
    assert expected > 0
    run = ok(capsys, dsn, "create", "tri", "--sql", EDGE_SQL)
    assert f"count = {expected}," in run.out
    assert f"|D| = {3 * distinct_pairs(conn, 'e', 'src', 'dst')}," in run.out
    assert view_value(conn) == expected
    assert sorted(user_triggers(conn, "e")) == sorted(f"pgivm_tri_{op}" for op in ("lock", "insert", "delete", "update", "truncate"))
    assert "OK" in ok(capsys, dsn, "verify", "tri", "--strict").out
    info = status_json(capsys, dsn)
    assert info["relations"]["R"]["values"] == info["relations"]["S"]["values"] == info["relations"]["T"]["values"]

    with conn.cursor() as cur:
        cur.executemany("INSERT INTO e VALUES (%s, %s)", [(rng.randrange(9), rng.randrange(9)) for _ in range(15)])
    conn.execute("DELETE FROM e WHERE ctid IN (SELECT ctid FROM e ORDER BY ctid LIMIT 6)")
    conn.execute("UPDATE e SET dst = 0 WHERE src = 2")
    conn.execute("INSERT INTO e VALUES (7, 7), (7, 8), (8, 7)")
    assert view_value(conn) == scalar(conn, EDGE_SQL)
    assert "OK" in ok(capsys, dsn, "verify", "tri").out
    ok(capsys, dsn, "rebalance", "tri")
    assert "OK" in ok(capsys, dsn, "verify", "tri", "--strict").out
    ok(capsys, dsn, "drop", "tri")
    assert user_triggers(conn, "e") == []
    assert not schema_exists(conn, "pgivm_tri")


# ----------------------------------------------------------------------------- names needing quotes


def test_quoted_table_and_column_names(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    conn.execute('CREATE TABLE "my table" ("A col" int, "B col" int)')
    conn.execute(sql.SQL('CREATE TABLE {} ("B col" int, "c" int)').format(sql.Identifier(ROBERT)))
    conn.execute('CREATE TABLE "T" ("C;--" int, "A col" int)')
    rng = random.Random(8)
    for table in ("my table", ROBERT, "T"):
        with conn.cursor() as cur:
            cur.executemany(
                sql.SQL("INSERT INTO {} VALUES (%s, %s)").format(sql.Identifier(table)),
                [(rng.randrange(5), rng.randrange(5)) for _ in range(25)],
            )
    view_sql = (
        f'SELECT count(*) AS "Tri Count" FROM "my table" JOIN "{ROBERT}" ON "my table"."B col" = "{ROBERT}"."B col" '
        f'JOIN "T" ON "{ROBERT}".c = "T"."C;--" AND "T"."A col" = "my table"."A col"'
    )
    expected = scalar(conn, view_sql)
    assert expected > 0
    name = "Tri's view"
    run = ok(capsys, dsn, "create", name, "--sql", view_sql)
    assert f"count = {expected}," in run.out
    assert scalar(conn, sql.SQL('SELECT "Tri Count" FROM {}').format(sql.Identifier(name))) == expected
    assert "OK" in ok(capsys, dsn, "verify", name, "--strict").out

    conn.execute(sql.SQL('INSERT INTO {} VALUES (1, 1), (2, 2), (2, 2)').format(sql.Identifier(ROBERT)))
    conn.execute('DELETE FROM "my table" WHERE "A col" = 3')
    conn.execute('UPDATE "T" SET "C;--" = "C;--" + 1 WHERE "A col" = 0')
    assert view_value(conn, name) == scalar(conn, view_sql)
    assert "OK" in ok(capsys, dsn, "verify", name).out
    assert status_json(capsys, dsn, name)["count"] == scalar(conn, view_sql)
    ok(capsys, dsn, "rebalance", name)
    ok(capsys, dsn, "drop", name)
    assert scalar(conn, sql.SQL("SELECT to_regclass({})").format(sql.Literal(sql.Identifier(name).as_string(conn)))) is None
    assert user_triggers(conn, "my table", ROBERT, "T") == []
    assert not schema_exists(conn, f"pgivm_{name}")
    assert scalar(conn, sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(ROBERT))) == 28


# ----------------------------------------------------------------------------------- join column types


def _value(types: tuple[str, str], i: int) -> Any:
    if types[0] == "text":
        return f"node {i}'s \"name\""
    if types[0] == "uuid":
        return uuid.UUID(int=(i * 0x9E3779B97F4A7C15) % (1 << 128) + 1)
    if set(types) == {"bigint"}:
        return (1 << 40) + i  # beyond int4
    return i


@pytest.mark.parametrize(
    "types",  # variable -> (type of its column in the first table that has it, in the second)
    [
        pytest.param({"a": ("text", "text"), "b": ("text", "text"), "c": ("text", "text")}, id="text"),
        pytest.param({"a": ("uuid", "uuid"), "b": ("uuid", "uuid"), "c": ("uuid", "uuid")}, id="uuid"),
        pytest.param({"a": ("bigint", "bigint"), "b": ("bigint", "bigint"), "c": ("bigint", "bigint")}, id="bigint"),
        pytest.param({"a": ("text", "text"), "b": ("uuid", "uuid"), "c": ("bigint", "bigint")}, id="text-uuid-bigint"),
        pytest.param({"a": ("integer", "bigint"), "b": ("smallint", "integer"), "c": ("bigint", "bigint")}, id="int-mix"),
    ],
)
def test_join_column_types(
    capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection, types: dict[str, tuple[str, str]]
) -> None:
    # r(a, b), s(b, c), t(c, a): the first table holding a variable uses types[v][0], the second types[v][1]
    columns = {
        "r": [("a", types["a"][0]), ("b", types["b"][0])],
        "s": [("b", types["b"][1]), ("c", types["c"][0])],
        "t": [("c", types["c"][1]), ("a", types["a"][1])],
    }
    for table, cols in columns.items():
        conn.execute(
            sql.SQL("CREATE TABLE {} ({}, id serial, note text)").format(
                sql.Identifier(table),
                sql.SQL(", ").join(sql.SQL("{} {}").format(sql.Identifier(c), sql.SQL(t)) for c, t in cols),  # type: ignore[arg-type]
            )
        )
    variables = {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}
    rng = random.Random(4)

    def insert(table: str, count: int, domain: int) -> None:
        x, y = variables[table]
        rows = [(_value(types[x], rng.randrange(domain)), _value(types[y], rng.randrange(domain))) for _ in range(count)]
        with conn.cursor() as cur:
            cur.executemany(
                sql.SQL("INSERT INTO {} ({}, {}) VALUES (%s, %s)").format(
                    sql.Identifier(table), sql.Identifier(x), sql.Identifier(y)
                ),
                rows,
            )

    for table in ("r", "s", "t"):
        insert(table, 20, 5)
        conn.execute(
            sql.SQL("INSERT INTO {} ({}) VALUES (NULL)").format(sql.Identifier(table), sql.Identifier(variables[table][0]))
        )
    expected = scalar(conn, TRIANGLE_SQL)
    assert expected > 0
    run = ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    assert f"count = {expected}," in run.out
    assert view_value(conn) == expected
    assert "OK" in ok(capsys, dsn, "verify", "tri", "--strict").out

    for table in ("r", "s", "t"):
        insert(table, 10, 6)
        conn.execute(sql.SQL("DELETE FROM {t} WHERE id IN (SELECT id FROM {t} ORDER BY id LIMIT 4)").format(t=sql.Identifier(table)))
    conn.execute("UPDATE r SET a = (SELECT a FROM t WHERE a IS NOT NULL ORDER BY id LIMIT 1) WHERE id % 3 = 0")
    conn.execute("UPDATE s SET note = 'x'")
    conn.execute("UPDATE t SET c = NULL WHERE id % 7 = 0")
    recount = scalar(conn, TRIANGLE_SQL)
    assert view_value(conn) == recount
    run = ok(capsys, dsn, "verify", "tri")
    assert f"maintained: {recount}" in run.out and f"recount:    {recount}" in run.out


# ------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["status", "nope"], id="status"),
        pytest.param(["status", "nope", "--json"], id="status-json"),
        pytest.param(["verify", "nope"], id="verify"),
        pytest.param(["verify", "nope", "--strict"], id="verify-strict"),
        pytest.param(["drop", "nope"], id="drop"),
        pytest.param(["rebalance", "nope"], id="rebalance"),
        pytest.param(["alter", "nope", "--epsilon", "0.3"], id="alter"),
    ],
)
def test_unknown_view(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection, args: list[str]) -> None:
    load_rst(conn)
    ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)  # another view exists
    assert_user_error(cli(capsys, dsn, *args), "no pgivm view named 'nope'")
    assert view_value(conn) == scalar(conn, TRIANGLE_SQL)


def _nothing_installed(conn: psycopg.Connection) -> None:
    assert scalar(conn, "SELECT to_regclass('public.tri')") is None
    assert not schema_exists(conn, "pgivm_tri")
    assert scalar(conn, "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal") == 0
    if scalar(conn, "SELECT to_regclass('pgivm_catalog.views')") is not None:
        assert scalar(conn, "SELECT count(*) FROM pgivm_catalog.views") == 0


@pytest.mark.parametrize(
    ("view_sql", "words"),
    [
        pytest.param("SELECT count(*) FROM r, s FULL JOIN t ON s.c = t.c", ["comma", "FULL JOIN"], id="comma-before-full-join"),
        pytest.param("SELECT count(*) OVER () FROM r", ["window functions"], id="window"),
        pytest.param("SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a LIMIT 1",
                     ["LIMIT"], id="limit"),
        pytest.param("DELETE FROM r", ["SELECT", "DELETE"], id="delete"),
        pytest.param("SELEC count(*) FROMM ((( r", ["could not parse"], id="garbage"),
        pytest.param("SELECT r.ctid, r.a FROM r", ["system column ctid", "not supported"], id="system-column"),
    ],
)
def test_create_unsupported_sql(
    capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection, view_sql: str, words: list[str]
) -> None:
    load_rst(conn)
    assert_user_error(cli(capsys, dsn, "create", "tri", "--sql", view_sql), *words)
    _nothing_installed(conn)
    assert scalar(conn, "SELECT count(*) FROM r") == 40  # DELETE FROM r was not run


def test_a_4_cycle_is_maintained_by_first_order(capsys: pytest.CaptureFixture[str], dsn: str,
                                               conn: psycopg.Connection) -> None:
    """No view tree takes a 4-cycle (it was refused by every system): first-order's delta rule does."""
    load_rst(conn)
    four = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c JOIN r r2 ON t.a = r2.a AND r2.b = r.a"
    assert "first-order" in ok(capsys, dsn, "create", "tri", "--sql", four).out
    conn.execute("INSERT INTO r VALUES (1, 2), (2, 1); DELETE FROM t WHERE ctid IN (SELECT ctid FROM t LIMIT 3)")
    assert scalar(conn, "SELECT * FROM tri") == scalar(conn, four)
    ok(capsys, dsn, "verify", "tri")


def test_create_missing_table(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    view_sql = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN missing_t ON s.c = missing_t.c AND missing_t.a = r.a"
    assert_user_error(cli(capsys, dsn, "create", "tri", "--sql", view_sql), "missing_t", "does not exist")
    _nothing_installed(conn)


def test_create_missing_column(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    load_rst(conn)
    view_sql = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.zz = r.a"
    assert_user_error(cli(capsys, dsn, "create", "tri", "--sql", view_sql), "column zz", "does not exist")
    _nothing_installed(conn)


def test_create_mismatched_join_types(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b text, c int); CREATE TABLE t (c int, a int)")
    assert_user_error(cli(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL), "different types")
    _nothing_installed(conn)


def test_create_over_a_view_maintains_the_tables_under_it(capsys: pytest.CaptureFixture[str], dsn: str,
                                                          conn: psycopg.Connection) -> None:
    """A plain view in FROM is expanded (issue 22): the triangle is maintained over t itself. A
    materialized view is no plain view: refused, nothing installed."""
    load_rst(conn)
    conn.execute("CREATE VIEW tv AS SELECT c, a FROM t")
    view_sql = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN tv ON s.c = tv.c AND tv.a = r.a"
    ok(capsys, dsn, "create", "tri", "--sql", view_sql)
    conn.execute("INSERT INTO t SELECT * FROM t")  # through the base table under tv
    assert view_value(conn) == scalar(conn, view_sql)
    ok(capsys, dsn, "drop", "tri")
    conn.execute("CREATE MATERIALIZED VIEW tm AS SELECT c, a FROM t")
    assert_user_error(cli(capsys, dsn, "create", "tri", "--sql", view_sql.replace("tv", "tm")), "tm", "not a table")
    _nothing_installed(conn)


def test_create_same_name_twice(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    expected = load_rst(conn)
    ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    assert_user_error(cli(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL), "'tri'", "already exists")
    # the first view is intact and still maintained
    assert view_value(conn) == expected
    conn.execute("INSERT INTO r SELECT * FROM r")
    assert view_value(conn) == 2 * expected
    assert len(json.loads(ok(capsys, dsn, "list", "--json").out)) == 1
    assert "OK" in ok(capsys, dsn, "verify", "tri").out


def test_create_name_taken_by_a_table(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    load_rst(conn)
    conn.execute("CREATE TABLE tri (x int)")
    assert_user_error(cli(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL), "public.tri", "already exists")
    assert not schema_exists(conn, "pgivm_tri")
    assert scalar(conn, "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal") == 0


def test_create_invalid_view_name(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    load_rst(conn)
    assert_user_error(cli(capsys, dsn, "create", "x" * 41, "--sql", TRIANGLE_SQL), "invalid view name")
    assert_user_error(cli(capsys, dsn, "create", "a\tb", "--sql", TRIANGLE_SQL), "invalid view name")


@pytest.mark.parametrize("epsilon", ["1.5", "-0.1"])
def test_epsilon_out_of_range(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection, epsilon: str) -> None:
    load_rst(conn)
    assert_user_error(cli(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL, "--epsilon", epsilon), "epsilon", epsilon)
    _nothing_installed(conn)
    ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    assert_user_error(cli(capsys, dsn, "alter", "tri", "--epsilon", epsilon), "epsilon", epsilon)
    assert status_json(capsys, dsn)["epsilon"] == 0.5


def test_create_without_sql_or_file(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    load_rst(conn)
    assert_user_error(cli(capsys, dsn, "create", "tri"), "--sql", "--file")
    _nothing_installed(conn)


def test_create_with_both_sql_and_file_is_refused(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection,
                                                  tmp_path: Path) -> None:
    load_rst(conn)
    definition = tmp_path / "tri.sql"
    definition.write_text(TRIANGLE_SQL)
    assert_user_error(cli(capsys, dsn, "create", "tri", "--file", str(definition), "--sql", "SELECT 1"), "--sql or --file, not both")
    _nothing_installed(conn)


def test_create_names_what_its_figure_counts(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    """A triangle view's figure is its count; a GROUP BY or listing view's is its number of rows."""
    load_rst(conn)
    grouped = "SELECT r.a, count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY r.a"
    run = ok(capsys, dsn, "create", "g", "--sql", grouped)
    assert f"rows = {scalar(conn, f'SELECT count(*) FROM ({grouped}) AS q')}," in run.out and "count =" not in run.out
    run = ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    assert f"count = {scalar(conn, TRIANGLE_SQL)}," in run.out
    rows, count = scalar(conn, f"SELECT count(*) FROM ({grouped}) AS q"), scalar(conn, TRIANGLE_SQL)
    listed = {line.split()[0]: line for line in ok(capsys, dsn, "list").out.splitlines()[2:]}
    assert f" rows = {rows} " in listed["g"] and f" count = {count} " in listed["tri"]
    for name, heading, value in (("g", "rows", rows), ("tri", "count", count)):
        table = ok(capsys, dsn, "status", name).out.splitlines()
        assert table[1].split()[0] == heading and table[3].split()[0] == str(value), table[:4]
        assert status_json(capsys, dsn, name)["counts"] == heading
    assert "updates" not in ok(capsys, dsn, "status", "g").out  # each figure says what it counts
    assert "base rows applied" in ok(capsys, dsn, "status", "g").out


def test_status_of_a_deferred_view_counts_what_its_actions_applied(capsys: pytest.CaptureFixture[str], dsn: str,
                                                                     conn: psycopg.Connection) -> None:
    """Its capture triggers only log: the figure is the log rows its actions and refreshes applied
    (it said "updates 0" after a worker had applied 800 statements)."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int)")
    ok(capsys, dsn, "create", "g", "--refresh", "deferred", "--sql",
       "SELECT r.a, sum(s.c) AS total FROM r JOIN s ON r.b = s.b GROUP BY r.a")
    for i in range(12):
        conn.execute("INSERT INTO r VALUES (%s, %s)", [i, i % 3])
        conn.execute("INSERT INTO s VALUES (%s, %s)", [i % 3, i])
    conn.execute("DELETE FROM r WHERE a < 2")
    conn.execute("SELECT * FROM g")  # a read refreshes
    info = status_json(capsys, dsn, "g")
    assert info["log_rows_applied"] == 26 and info["pending_changes"] == 0 and "updates_applied" not in info
    assert "log rows applied" in ok(capsys, dsn, "status", "g").out


def test_status_of_a_deferred_view_fits_100_columns(capsys: pytest.CaptureFixture[str], dsn: str,
                                                     conn: psycopg.Connection) -> None:
    """Its figures (refresh, budget, planner, pending, actions, ...) would make a row of 250
    characters: they are listed one per line instead; the tables below fit as they are."""
    load_rst(conn)
    ok(capsys, dsn, "create", "g", "--sql", "SELECT r.a, count(*) AS n FROM r JOIN s ON r.b = s.b GROUP BY r.a",
       "--refresh", "deferred")
    lines = ok(capsys, dsn, "status", "g").out.splitlines()
    assert all(len(line) <= 100 for line in lines[1:]), max(lines[1:], key=len)
    assert lines[1].split() == ["figure", "value"] and any(line.split()[:2] == ["refresh", "deferred"] for line in lines)


def test_verify_names_each_differing_row_by_its_columns(capsys: pytest.CaptureFixture[str], dsn: str,
                                                         conn: psycopg.Connection) -> None:
    """A GROUP BY view whose one group's sum is off: verify prints that group's row as the view has
    it and as the recount has it, each value by its column's name, and exits 1."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); "
                 "INSERT INTO r VALUES (1, 1), (2, 1), (3, 2); INSERT INTO s VALUES (1, 10), (2, 20)")
    ok(capsys, dsn, "create", "g", "--system", "first-order",
       "--sql", "SELECT s.c, count(*) AS n, sum(r.a) AS total FROM r JOIN s ON r.b = s.b GROUP BY s.c")
    conn.execute('UPDATE pgivm_g.maintained SET p2 = p2 + 5 WHERE "s.c" = 20')  # the sum of group 20, 3, now 8
    run = cli(capsys, dsn, "verify", "g")
    assert run.code == 1
    assert "result_equals_plain_sql: view: c = 20, n = 1, total = 8" in run.out
    assert "result_equals_plain_sql: plain sql: c = 20, n = 1, total = 3" in run.out


def test_create_with_missing_file(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection, tmp_path: Path) -> None:
    load_rst(conn)
    missing = tmp_path / "no-such-view.sql"
    assert_user_error(cli(capsys, dsn, "create", "tri", "--file", str(missing)), "no-such-view.sql")
    _nothing_installed(conn)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["init"], id="init"),
        pytest.param(["list"], id="list"),
        pytest.param(["status", "tri"], id="status"),
        pytest.param(["verify", "tri"], id="verify"),
        pytest.param(["create", "tri", "--sql", TRIANGLE_SQL], id="create"),
        pytest.param(["drop", "tri"], id="drop"),
    ],
)
def test_unreachable_dsn(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    message = assert_user_error(cli(capsys, UNREACHABLE, *args), "could not connect")
    assert "127.0.0.1" in message and "port=1" in message


# ------------------------------------------------------- SQL that PostgreSQL itself would not run as is


@pytest.mark.parametrize(
    "view_sql",
    [
        # an ON clause naming a table joined later
        pytest.param("SELECT count(*) FROM r JOIN s ON r.b = s.b AND t.a = r.a JOIN t ON s.c = t.c", id="on-forward-reference"),
        # JOIN binds tighter than the comma: r is out of scope in the ON clause
        pytest.param("SELECT count(*) FROM r, s JOIN t ON s.c = t.c AND t.a = r.a WHERE r.b = s.b", id="on-out-of-scope"),
        # sum(unknown) is ambiguous in PostgreSQL
        pytest.param(TRIANGLE_SQL.replace("count(*)", "sum('1')"), id="sum-string-literal"),
    ],
)
def test_create_rejects_sql_postgres_rejects(
    capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection, view_sql: str
) -> None:
    """pgivm must not install a view whose definition PostgreSQL cannot run (verify would recount it)."""
    load_rst(conn)
    with pytest.raises(psycopg.Error):
        conn.execute(view_sql)
    run = cli(capsys, dsn, "create", "tri", "--sql", view_sql)
    assert run.code == 2, f"create accepted SQL that PostgreSQL rejects: {run.out}"
    assert "Traceback" not in run.err
    _nothing_installed(conn)


def test_column_alias_list_is_not_misread(capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    """``r AS x (b, a)`` swaps r's columns; pgivm must reject it or count what PostgreSQL counts."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    conn.execute("INSERT INTO r VALUES (1, 2); INSERT INTO s VALUES (2, 3); INSERT INTO t VALUES (3, 1)")
    view_sql = "SELECT count(*) FROM r AS x (b, a) JOIN s ON x.b = s.b JOIN t ON s.c = t.c AND t.a = x.a"
    assert scalar(conn, view_sql) == 0  # x.b is r.a = 1, which matches no s.b
    run = cli(capsys, dsn, "create", "tri", "--sql", view_sql)
    if run.code == 2:
        assert_user_error(run)
    else:
        assert run.code == 0, run
        assert view_value(conn) == scalar(conn, view_sql), "maintained count differs from PostgreSQL's"


# ------------------------------------------------------------ base tables with more than one heap


def test_rows_of_an_inheritance_child_are_maintained_or_refused(
    capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection
) -> None:
    """``FROM r`` reads r's inheritance children too; their rows must be maintained or create must refuse."""
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    conn.execute("CREATE TABLE r_child () INHERITS (r)")
    conn.execute("INSERT INTO s VALUES (2, 3); INSERT INTO t VALUES (3, 1)")
    run = cli(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    if run.code == 2:
        assert_user_error(run)
        return
    assert run.code == 0, run
    conn.execute("INSERT INTO r_child VALUES (1, 2)")
    assert scalar(conn, TRIANGLE_SQL) == 1
    assert view_value(conn) == 1, "a row inserted into a child table of r was not maintained"


def test_partitioned_table_is_maintained_and_a_partition_refused(
    capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection
) -> None:
    """A partitioned base table is maintained (writes through it and into its partitions); a view
    over one partition is refused in one line, since writes through the parent would bypass it."""
    conn.execute(
        "CREATE TABLE r (a int, b int) PARTITION BY RANGE (a);"
        "CREATE TABLE r_low PARTITION OF r FOR VALUES FROM (0) TO (10);"
        "CREATE TABLE r_high PARTITION OF r FOR VALUES FROM (10) TO (100);"
        "CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)"
    )
    run = cli(capsys, dsn, "create", "part", "--sql", TRIANGLE_SQL.replace("FROM r ", "FROM r_low AS r "))
    assert run.code == 2
    assert_user_error(run)
    assert "is a partition" in run.err and "parent" in run.err
    assert scalar(conn, "SELECT count(*) FROM pg_namespace WHERE nspname = 'pgivm_part'") == 0
    ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL)
    conn.execute("INSERT INTO s VALUES (2, 3), (12, 3); INSERT INTO t VALUES (3, 1), (3, 11)")
    conn.execute("INSERT INTO r VALUES (1, 2)")  # through the parent
    conn.execute("INSERT INTO r_high VALUES (11, 12)")  # straight into a partition
    assert view_value(conn) == 2
    conn.execute("UPDATE r SET a = 11, b = 12 WHERE a = 1")  # moves to r_high: (11, 12) twice
    assert view_value(conn) == 2
    conn.execute("TRUNCATE r_high")
    assert view_value(conn) == 0
    assert ok(capsys, dsn, "verify", "tri").code == 0

# ------------------------------------------------------------------ progress line, quoted hint, psql


def test_create_says_it_is_building_only_when_slow(
    capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_rst(conn)
    monkeypatch.setattr(pgivm_cli, "SLOW_NOTE_AFTER_S", 0.0)  # every build is slow now
    run = ok(capsys, dsn, "create", "tri", "--sql", TRIANGLE_SQL, "--epsilon", "0.25")
    assert run.err.splitlines() == [
        "creating tri (epsilon=0.25): building the state from the base tables ..."]
    # a refusal of the SQL comes before the note, even with no delay at all
    assert_user_error(cli(capsys, dsn, "create", "bad", "--sql", "SELEC count(*) FROMM r"), "could not parse")


@pytest.mark.parametrize(
    ("schema", "name", "hint"),
    [
        pytest.param("Weird", "My View", '"Weird"."My View"', id="spaces-and-capitals"),
        pytest.param("public", "user", 'public."user"', id="reserved-word"),
        pytest.param("reports", 'say "hi"', 'reports."say ""hi"""', id="double-quote"),
    ],
)
def test_create_hint_quotes_names_that_need_it(
    capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection, schema: str, name: str, hint: str
) -> None:
    expected = load_rst(conn)
    conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
    run = ok(capsys, dsn, "create", name, "--sql", TRIANGLE_SQL, "--schema", schema)
    line = run.out.splitlines()[-1]
    assert line == f"read it from any SQL client: SELECT * FROM {hint};"
    printed = line.removeprefix("read it from any SQL client: ")
    assert scalar(conn, printed) == expected  # the hint runs as printed


def test_psql_runs_on_the_resolved_database(capfd: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection) -> None:
    database = conninfo_to_dict(dsn)["dbname"]
    capfd.readouterr()
    assert main(["psql", "--dsn", dsn, "-X", "-At", "-c", "SELECT current_database()"]) == 0
    assert capfd.readouterr().out.strip() == database
    assert main(["--dsn", dsn, "psql", "-X", "-A", "-t", "-c", "SELECT 41 + 1"]) == 0
    assert capfd.readouterr().out.strip() == "42"
    # psql's own exit code and messages come through
    assert main(["psql", "--dsn", dsn, "-X", "-c", "SELECT * FROM no_such_table"]) == 1
    assert "no_such_table" in capfd.readouterr().err
    # `--` hands psql arguments pgivm would otherwise take itself
    assert main(["psql", "--dsn", dsn, "--", "--help"]) == 0
    assert "psql" in capfd.readouterr().out


def test_psql_falls_back_to_the_bundled_psql(
    capfd: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no psql on PATH
    monkeypatch.setenv("PGIVM_DATA_DIR", str(tmp_path / "pgdata"))  # nothing there: the default version
    capfd.readouterr()
    assert main(["psql", "--dsn", dsn, "-X", "-At", "-c", "SELECT version()"]) == 0
    assert capfd.readouterr().out.startswith("PostgreSQL ")


def test_psql_missing_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PGIVM_DATA_DIR", str(tmp_path / "pgdata"))
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    fake = type("Utils", (), {"POSTGRES_VERSIONS": {18: empty_bin}, "TARGET_POSTGRES_VERSION": "18"})
    monkeypatch.setattr(pgivm_server, "_pgserver_utils", lambda: fake)
    message = assert_user_error(cli(capsys, UNREACHABLE, "psql", "-c", "SELECT 1"), "no psql found", "install")
    assert "could not connect" not in message  # refused before connecting


# ------------------------------------------------------------------------------------ closed pipes


@pytest.mark.parametrize(
    ("args", "unbuffered"),
    [
        pytest.param(["--help"], False, id="help"),
        pytest.param(["list"], False, id="list"),
        pytest.param(["list", "--json"], False, id="list-json"),
        # unbuffered, the write itself fails, inside the command rather than at the final flush
        pytest.param(["list"], True, id="list-unbuffered"),
    ],
)
def test_closed_stdout_exits_quietly(dsn: str, args: list[str], unbuffered: bool) -> None:
    """``pgivm list | head -0``: no BrokenPipeError traceback, the exit code of a SIGPIPE death."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before pgivm writes a byte
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pgivm.cli", "--dsn", dsn, *args],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120, check=False, env=env,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == pgivm_cli.EXIT_BROKEN_PIPE == 141, proc.stderr
    assert proc.stderr == ""


# -------------------------------------------------------------------------------------------- demo


def test_demo_on_a_given_database_says_nothing_about_the_embedded_server(
    capsys: pytest.CaptureFixture[str], dsn: str, conn: psycopg.Connection
) -> None:
    run = ok(capsys, dsn, "demo", "--nodes", "60", "--edges", "300", "--updates", "20")
    assert "query it yourself: SELECT * FROM ivme_demo.demo_triangles  (on " in run.out
    recount = scalar(conn, "SELECT count(*) FROM ivme_demo.r JOIN ivme_demo.s ON r.b = s.b "
                           "JOIN ivme_demo.t ON s.c = t.c AND t.a = r.a")
    assert scalar(conn, "SELECT * FROM ivme_demo.demo_triangles") == recount
    final = next(line for line in run.out.splitlines() if line.startswith("final count (maintained)"))
    assert final.split()[-1] == f"{recount:,}"
    assert "server stop" not in run.out and "still running" not in run.out
    # a second run replaces the demo's own schema, but never one of the user's by that name
    ok(capsys, dsn, "demo", "--nodes", "60", "--edges", "300", "--updates", "20")
    ok(capsys, dsn, "drop", "demo_triangles")
    conn.execute("DROP SCHEMA ivme_demo CASCADE; CREATE SCHEMA ivme_demo; CREATE TABLE ivme_demo.mine (x int)")
    run = cli(capsys, dsn, "demo", "--nodes", "60", "--edges", "300", "--updates", "20")
    assert run.code == 2 and run.out.startswith("pgivm demo on ") and len(run.out.splitlines()) == 1, run
    assert run.err.splitlines() == [
        "pgivm: error: schema ivme_demo exists and is not the demo's own, so the demo will not replace it "
        "(drop or rename it, or run the demo on another database (--dsn))"
    ]
    assert scalar(conn, "SELECT to_regclass('ivme_demo.mine') IS NOT NULL")


def test_create_names_the_columns_as_create_view_does(capsys: pytest.CaptureFixture[str], dsn: str,
                                                      conn: psycopg.Connection) -> None:
    """--columns names the view's columns, as CREATE VIEW v (a, b) (and pg_ivm's 'mv(a, b)') do: two
    SELECT items of one name then make a view (pg_ivm's outer-join suite names them so)."""
    conn.execute("CREATE TABLE r (i int); CREATE TABLE s (i int, j int); INSERT INTO r VALUES (1), (2); "
                 "INSERT INTO s VALUES (2, 5), (3, 6)")
    query = "SELECT r.i, s.i, s.j FROM r FULL JOIN s ON r.i = s.i"
    assert_user_error(cli(capsys, dsn, "create", "mv", "--sql", query), "two columns named i")
    ok(capsys, dsn, "create", "mv", "--sql", query, "--columns", "r, si")
    assert [d.name for d in conn.execute("SELECT * FROM mv").description] == ["r", "si", "j"]
    conn.execute("INSERT INTO s VALUES (1, 7)")
    assert sorted(conn.execute("SELECT * FROM mv").fetchall(), key=repr) == sorted(conn.execute(query).fetchall(), key=repr)
    assert_user_error(cli(capsys, dsn, "create", "mv2", "--sql", query, "--columns", "a,b,c,d"), "4 column names", "3 columns")
    ok(capsys, dsn, "create", "mv2", "--sql", "SELECT * FROM s", "--columns", "x")  # SELECT *: named once parsed
    assert [d.name for d in conn.execute("SELECT * FROM mv2").description] == ["x", "j"]
    assert_user_error(cli(capsys, dsn, "create", "mv3", "--sql", "SELECT * FROM s", "--columns", "x,y,z"), "3 column names")
    assert_user_error(cli(capsys, dsn, "create", "mv3", "--sql", query, "--columns", "a,a"), "given twice")


def test_status_of_a_sample_view_fits_100_columns(capsys: pytest.CaptureFixture[str], dsn: str,
                                                  conn: psycopg.Connection) -> None:
    """A sample view's figures (K, |Q| with its long heading, replacements, index rows, ...) made a
    row of over 300 characters: one per line instead, and every line fits 100 columns."""
    load_rst(conn)
    ok(capsys, dsn, "create", "p", "--system", "sample", "--size", "5",
       "--sql", "SELECT r.a, s.c, t.a AS ta FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c")
    lines = ok(capsys, dsn, "status", "p").out.splitlines()
    assert all(len(line) <= 100 for line in lines[1:]), max(lines[1:], key=len)
    assert lines[1].split() == ["figure", "value"]

"""``pgivm bench coverage`` at tiny sizes: every case runs under no view, its default system where
that is not first-order, first-order and recompute (pg_ivm is not in the test server), each pgivm
view verifies after its stream (the bench asserts it), and every table has its rows. No timing is
asserted."""

from __future__ import annotations

import psycopg
import pytest

from pgivm.bench import coverage


def test_every_case_runs_under_every_strategy(conn: psycopg.Connection, dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    conn.execute("CREATE SCHEMA bench")
    with psycopg.connect(dsn, autocommit=True, options="-c search_path=bench") as scratch:
        tables = coverage.main(scratch, coverage.Config(rows=400, groups=20, statements=24, group_rows=300, deletes=4))
    out = capsys.readouterr().out
    assert list(tables) == [*coverage.CASES, "delete max"], out
    # F-IVM by default where its leaves compute the values (the CASE over r) and over a derived table;
    # beside first-order, the default, for DISTINCT (registry.tried)
    defaults = {"distinct": ["fivm"], "computed": ["default (fivm)"], "aggregating subquery": ["default (fivm)"],
                "nested subqueries": ["default (fivm)"], "= ANY": ["default (fivm)"], "LATERAL": ["default (fivm)"]}
    for label, rows in tables.items():
        assert [row[0] for row in rows] == ["no view", *defaults.get(label, []), "first-order", "recompute"], (label, out)
        assert all(float(row[1]) > 0 and float(str(row[3]).replace(",", "")) >= 0 for row in rows), (label, out)
    # recompute reads the whole join each statement, first-order the delta's partners
    recompute, first_order = (float(str(r[3]).replace(",", "")) for r in tables["delete max"][2:0:-1])
    assert first_order < recompute, out
    assert conn.execute("SELECT count(*) FROM pgivm_catalog.views").fetchone() == (0,)

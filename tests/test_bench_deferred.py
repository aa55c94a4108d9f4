"""``pgivm bench deferred`` at tiny sizes: every setting runs, every deferred view verifies (the
bench asserts it), the worker starts and stops, and the targets table is printed. No timing is
asserted."""

from __future__ import annotations

import psycopg
import pytest

from pgivm.bench import deferred, graphs


def test_writes_and_the_tpch_case_run_under_every_setting(conn: psycopg.Connection, dsn: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    config = deferred.Config(edges=graphs.power_law_graph(80, 400, seed=2), source="a generated graph",
                             parts=("writes", "tpch"), single_rows=40, copy_rows=500, budget_ms=5, tpch_scale=0.01,
                             steps=40, dsn=dsn)
    deferred.main(conn, config)
    out = capsys.readouterr().out
    for setting in ("no view", "immediate", "deferred (writers act)", "deferred + worker"):
        assert f"\n{setting} " in out, out
    for setting in ("naive", "online"):
        assert f"\n{setting} " in out
    assert len(config.targets) == 5 and "targets (issue 13)" in out
    assert conn.execute("SELECT count(*) FROM pgivm.views").fetchone() == (0,)  # every view dropped again

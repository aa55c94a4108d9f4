"""``pgivm bench deferred`` at tiny sizes: every setting runs, every deferred view verifies (the
bench asserts it), the worker starts and stops, and the targets table is printed. No timing is
asserted."""

from __future__ import annotations

import psycopg
import pytest

from pgivm.bench import deferred, graphs


def test_writes_the_tpch_case_and_the_simulation_run_under_every_setting(conn: psycopg.Connection, dsn: str, tmp_path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    config = deferred.Config(edges=graphs.power_law_graph(80, 400, seed=2), source="a generated graph",
                             parts=("writes", "latency", "tpch", "simulate"), reads=20, single_rows=40, copy_rows=500, budget_ms=5,
                             tpch_scale=0.01, steps=40, tpch_budget_ms=1.5, dsn=dsn, horizons=(100, 300), out=tmp_path)
    deferred.main(conn, config)
    out = capsys.readouterr().out
    for setting in ("no view", "immediate", "deferred, nothing applied", "deferred (writers act)", "deferred + worker"):
        assert f"\n{setting} " in out, out
    for setting in ("naive", "online"):
        assert f"\n{setting} " in out
    assert "read wall time ms" in out
    assert len(config.targets) == 9 and "targets (issue 13)" in out
    # the database's planner predicted the work the offline planners simulate on the same stream
    for planner, (simulated, predicted) in config.work.items():
        assert simulated == pytest.approx(predicted, rel=1e-9), planner
    assert set(config.work) == {"naive", "online"} and config.work["naive"][0] > 0
    for name in ("SS", "SU", "FS", "FU"):
        assert f"\n{name} " in out
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (tmp_path / "deferred-simulation.png").stat().st_size > 10_000
    assert (tmp_path / "deferred-costs.png").stat().st_size > 10_000
    assert conn.execute("SELECT count(*) FROM pgivm_catalog.views").fetchone() == (0,)  # every view dropped again

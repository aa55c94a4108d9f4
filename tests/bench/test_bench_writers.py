"""``pgivm bench writers`` briefly: every setting runs, each view verifies after its writers (the
bench asserts it), and writers of views over shared tables never deadlock, also after earlier
settings dropped views (a drop once switched the writers' lock off for every view). No timing is
asserted."""

from __future__ import annotations

import psycopg
import pytest

from pgivm.bench import writers


def test_every_setting_runs_and_no_writer_deadlocks(conn: psycopg.Connection, dsn: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    conn.execute("CREATE SCHEMA bench")
    with psycopg.connect(dsn, autocommit=True, options="-c search_path=bench") as scratch:
        rows = writers.main(scratch, writers.Config(seconds=0.4, rows=300, dsn=dsn))
    out = capsys.readouterr().out
    labels = [row[0] for row in rows]
    assert labels == ["no view", "no view, 1 writer", "1 immediate view", "2 immediate views", "4 immediate views",
                      "1 deferred view", "2 deferred views", "4 deferred views"], out
    assert all(row[1] > 0 for row in rows), out  # every setting committed something
    assert [row[2] for row in rows] == [0] * len(rows), out  # deadlocks
    assert conn.execute("SELECT count(*) FROM pgivm_catalog.views").fetchone() == (0,)  # every view dropped again

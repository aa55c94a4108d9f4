"""The sample system under concurrent writers: four sessions insert, delete and update the base
tables of one sample view at once (multi-statement transactions, rollbacks), under READ COMMITTED
and REPEATABLE READ. Writers queue on the view's lock (a REPEATABLE READ writer whose snapshot
predates another's commit fails with 40001 and is retried). Checked from snapshots while they run
and at the end: the sample is min(k, |Q|) distinct results of the join as PostgreSQL computes it,
and verify's invariants of the index hold.
"""

from __future__ import annotations

import random
import threading

import psycopg
import pytest
from psycopg import errors

from pgivm import command

VIEW_SQL = "SELECT r.a, s.c, t.d FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c WHERE r.a <> t.d"
K = 6
WRITERS = 4
TRANSACTIONS = 30


def _sample_is_valid(conn: psycopg.Connection) -> None:
    total = conn.execute(f"SELECT count(*) FROM ({VIEW_SQL}) q").fetchone()[0]
    shown = conn.execute("SELECT count(*) FROM v").fetchone()[0]
    extra = conn.execute(f"SELECT * FROM v EXCEPT ALL ({VIEW_SQL})").fetchall()
    assert shown == min(K, total) and extra == [], (shown, total, extra)


def _writer(dsn: str, seed: int, isolation: psycopg.IsolationLevel, tally: dict[str, int], seen: list[BaseException]) -> None:
    rng = random.Random(seed)
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("SET lock_timeout = '20s'")
            conn.isolation_level = isolation
            conn.autocommit = False
            done = 0
            while done < TRANSACTIONS:
                try:
                    for _ in range(rng.randint(1, 3)):
                        kind = rng.choice(["r", "s", "t", "delete", "update"])
                        if kind == "r":
                            conn.execute("INSERT INTO r VALUES (%s, %s), (%s, %s)",
                                         [rng.randint(0, 4), rng.randint(0, 3), rng.randint(0, 4), rng.randint(0, 3)])
                        elif kind == "s":
                            conn.execute("INSERT INTO s VALUES (%s, %s)", [rng.randint(0, 3), rng.randint(0, 3)])
                        elif kind == "t":
                            conn.execute("INSERT INTO t VALUES (%s, %s)", [rng.randint(0, 3), rng.randint(0, 4)])
                        elif kind == "delete":
                            table = rng.choice(["r", "s", "t"])
                            conn.execute(f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} ORDER BY random() LIMIT 2)")
                        else:
                            conn.execute("UPDATE s SET c = (c + 1) %% 4 WHERE b = %s", [rng.randint(0, 3)])
                    if rng.random() < 0.2:
                        conn.rollback()
                        tally["rollbacks"] += 1
                    else:
                        conn.commit()
                        tally["commits"] += 1
                    done += 1
                except errors.SerializationFailure:
                    conn.rollback()
                    tally["retries"] += 1
    except BaseException as exc:  # noqa: BLE001  # reported by the test
        seen.append(exc)


@pytest.mark.parametrize("isolation", [psycopg.IsolationLevel.READ_COMMITTED, psycopg.IsolationLevel.REPEATABLE_READ],
                         ids=["read-committed", "repeatable-read"])
def test_concurrent_writers_keep_a_valid_sample(dsn: str, conn: psycopg.Connection, isolation: psycopg.IsolationLevel) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, d int)")
    conn.execute("INSERT INTO r SELECT g % 5, g % 4 FROM generate_series(1, 12) g; "
                 "INSERT INTO s SELECT g % 4, g % 4 FROM generate_series(1, 8) g; "
                 "INSERT INTO t SELECT g % 4, g % 5 FROM generate_series(1, 8) g")
    command.create("v", VIEW_SQL, system="sample", size=K, seed=1, target=dsn)
    tally = {"commits": 0, "rollbacks": 0, "retries": 0}
    seen: list[BaseException] = []
    threads = [threading.Thread(target=_writer, args=(dsn, seed, isolation, tally, seen), daemon=True)
               for seed in range(WRITERS)]
    for thread in threads:
        thread.start()
    checks = 0
    while any(t.is_alive() for t in threads):
        with psycopg.connect(dsn) as reader:
            reader.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            _sample_is_valid(reader)
            checks += 1
    for thread in threads:
        thread.join(120)
        assert not thread.is_alive()
    assert seen == [], seen
    assert tally["commits"] > WRITERS * TRANSACTIONS // 2 and tally["rollbacks"] > 0
    _sample_is_valid(conn)
    report = command.verify("v", target=dsn)
    assert report.ok, [str(f) for f in report.failures]
    print(f"{tally} with {checks} mid-run snapshot checks")

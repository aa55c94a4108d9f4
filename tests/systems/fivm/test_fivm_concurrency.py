"""F-IVM under concurrent writers: threads with their own sessions write the base tables of one
view at once (multi-row INSERT, DELETE, UPDATE of join and GROUP BY columns, rollbacks), under
READ COMMITTED and REPEATABLE READ. The capture layer serializes the writers of a view on its lock
(as for every system); a REPEATABLE READ writer whose snapshot predates another writer's commit
fails with 40001 and is retried. Checks, from snapshots taken while the writers run and at the end:
the view equals its own SQL run by PostgreSQL, and verify checks every view of the tree.
"""

from __future__ import annotations

import random
import threading

import psycopg
import pytest
from psycopg import errors

from pgivm import command

VIEW_SQL = ("SELECT r.g, count(*) AS n, sum(r.x * t.z) AS xz, avg(s.y) AS ay "
            "FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c WHERE t.z > 0 GROUP BY r.g")
WRITERS = 4
TRANSACTIONS = 40


def _differences(conn: psycopg.Connection) -> list[tuple[object, ...]]:
    return conn.execute(f"(SELECT * FROM v EXCEPT ALL ({VIEW_SQL})) UNION ALL (({VIEW_SQL}) EXCEPT ALL SELECT * FROM v)").fetchall()


def _writer(dsn: str, seed: int, isolation: psycopg.IsolationLevel, tally: dict[str, int], errors_seen: list[BaseException]) -> None:
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
                        kind = rng.choice(["insert_r", "insert_s", "insert_t", "delete", "update_join", "update_group"])
                        if kind == "insert_r":
                            conn.execute("INSERT INTO r SELECT %s, %s, %s FROM generate_series(1, %s)",
                                         [rng.randint(0, 3), rng.randint(0, 5), rng.choice([None, 1, 2, 3]), rng.randint(1, 4)])
                        elif kind == "insert_s":
                            conn.execute("INSERT INTO s VALUES (%s, %s, %s)", [rng.randint(0, 5), rng.randint(0, 5), rng.randint(0, 9)])
                        elif kind == "insert_t":
                            conn.execute("INSERT INTO t VALUES (%s, %s)", [rng.randint(0, 5), rng.randint(-1, 4)])
                        elif kind == "delete":
                            table = rng.choice(["r", "s", "t"])
                            conn.execute(f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} ORDER BY random() LIMIT 2)")
                        elif kind == "update_join":
                            conn.execute("UPDATE s SET c = (c + 1) %% 6 WHERE b = %s", [rng.randint(0, 5)])
                        else:
                            conn.execute("UPDATE r SET g = (g + 1) %% 4 WHERE b = %s", [rng.randint(0, 5)])
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
        errors_seen.append(exc)


@pytest.mark.parametrize("isolation", [psycopg.IsolationLevel.READ_COMMITTED, psycopg.IsolationLevel.REPEATABLE_READ],
                         ids=["read-committed", "repeatable-read"])
def test_concurrent_writers_keep_the_view_exact(dsn: str, conn: psycopg.Connection, isolation: psycopg.IsolationLevel) -> None:
    conn.execute("CREATE TABLE r (g int, b int, x numeric); CREATE TABLE s (b int, c int, y int); CREATE TABLE t (c int, z int)")
    conn.execute("INSERT INTO r SELECT g % 4, g % 6, g % 3 FROM generate_series(1, 30) g; "
                 "INSERT INTO s SELECT g % 6, g % 5, g FROM generate_series(1, 20) g; "
                 "INSERT INTO t SELECT g % 6, g % 4 FROM generate_series(1, 15) g")
    command.create("v", VIEW_SQL, system="fivm", target=dsn)
    before = conn.execute("SELECT * FROM v ORDER BY 1").fetchall()
    tally = {"commits": 0, "rollbacks": 0, "retries": 0}
    seen: list[BaseException] = []
    threads = [threading.Thread(target=_writer, args=(dsn, seed, isolation, tally, seen), daemon=True)
               for seed in range(WRITERS)]
    for thread in threads:
        thread.start()
    checks = 0
    while any(t.is_alive() for t in threads):  # consistent snapshots while the writers run
        with psycopg.connect(dsn) as reader:
            reader.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            assert _differences(reader) == []
            checks += 1
    for thread in threads:
        thread.join(120)
        assert not thread.is_alive()
    assert seen == [], seen
    assert tally["commits"] > WRITERS * TRANSACTIONS // 2 and tally["rollbacks"] > 0
    if isolation == psycopg.IsolationLevel.REPEATABLE_READ:
        print(f"40001 retries: {tally['retries']}")
    assert _differences(conn) == []
    assert conn.execute("SELECT * FROM v ORDER BY 1").fetchall() != before  # the writers changed the result
    report = command.verify("v", target=dsn)
    assert report.ok, [str(f) for f in report.failures]
    print(f"{tally} with {checks} mid-run snapshot checks")

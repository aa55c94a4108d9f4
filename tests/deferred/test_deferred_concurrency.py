"""Deferred views under concurrent writers, readers and the worker.

Writer threads change the base tables of a deferred F-IVM view, a deferred first-order view of
the same query and a deferred IVMε view at once (multi-statement transactions, rollbacks), under READ COMMITTED, REPEATABLE READ and
SERIALIZABLE; a reader thread reads the views (which applies what is pending) and recounts them
in plain SQL in the same REPEATABLE READ or SERIALIZABLE snapshot; with or without `pgivm worker`.
Applying a log entry twice or missing one would make a read differ from its recount, or `verify`
fail at the end. A transaction whose snapshot predates a write it must apply gets 40001 and is
retried; the tally proves every kind of operation ran and some reads found changes to apply.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import psycopg
import pytest
from psycopg import errors

from pgivm import command, deferred

GROUPED = ("SELECT r.g, count(*) AS n, sum(1.0 * r.x * t.z) AS xz FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c "
           "GROUP BY r.g")
TRIANGLE = "SELECT count(*) FROM e AS x JOIN e AS y ON x.dst = y.src JOIN e AS z ON y.dst = z.src AND z.dst = x.src"
VIEWS = [("g", GROUPED), ("c", TRIANGLE), ("f", GROUPED)]
LEVELS = [psycopg.IsolationLevel.READ_COMMITTED, psycopg.IsolationLevel.REPEATABLE_READ, psycopg.IsolationLevel.SERIALIZABLE]


def _differences(conn: psycopg.Connection, name: str, query: str) -> list[tuple[object, ...]]:
    return conn.execute(f"(SELECT * FROM {name} EXCEPT ALL ({query})) UNION ALL "
                        f"(({query}) EXCEPT ALL SELECT * FROM {name})").fetchall()


def _writer(dsn: str, seed: int, stop: threading.Event, tally: dict[str, int], failures: list[BaseException]) -> None:
    rng = random.Random(seed)
    try:
        with psycopg.connect(dsn) as conn:
            conn.execute("SET lock_timeout = '30s'")
            conn.commit()
            while not stop.is_set():
                conn.isolation_level = rng.choice(LEVELS)
                try:
                    for _ in range(rng.randint(1, 3)):
                        kind = rng.choice(["r", "s", "t", "e", "delete", "update"])
                        if kind == "r":
                            conn.execute("INSERT INTO r SELECT %s, %s, %s FROM generate_series(1, %s)",
                                         [rng.randint(0, 3), rng.randint(0, 5), rng.randint(0, 3), rng.randint(1, 3)])
                        elif kind in ("s", "t"):
                            conn.execute(f"INSERT INTO {kind} VALUES (%s, %s)", [rng.randint(0, 5), rng.randint(0, 5)])
                        elif kind == "e":
                            conn.execute("INSERT INTO e VALUES (%s, %s), (%s, %s)", [rng.randint(0, 7) for _ in range(4)])
                        elif kind == "delete":
                            table = rng.choice(["r", "s", "t", "e"])
                            conn.execute(f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} ORDER BY random() LIMIT 2)")
                        else:
                            conn.execute("UPDATE s SET c = (c + 1) %% 6 WHERE b = %s", [rng.randint(0, 5)])
                    if rng.random() < 0.2:
                        conn.rollback()
                        tally["rollbacks"] += 1
                    else:
                        conn.commit()
                        tally["commits"] += 1
                    time.sleep(rng.random() * 0.02)  # room for the reader's snapshots
                except (errors.SerializationFailure, errors.DeadlockDetected):
                    conn.rollback()
                    tally["retries"] += 1
    except BaseException as err:  # noqa: BLE001  # reported by the test
        failures.append(err)


def _reader(dsn: str, seed: int, stop: threading.Event, tally: dict[str, int], failures: list[BaseException]) -> None:
    rng = random.Random(seed)
    try:
        with psycopg.connect(dsn) as conn:
            conn.execute("SET lock_timeout = '30s'")
            conn.commit()
            while not stop.is_set():
                conn.isolation_level = rng.choice(LEVELS[1:])
                try:
                    name, query = rng.choice(VIEWS)
                    pending = conn.execute(f"SELECT sum(pending) FROM pgivm_{name}.deferred_table").fetchone()[0]  # type: ignore[index]
                    different = _differences(conn, name, query)
                    if different:
                        failures.append(AssertionError(f"{name} differs from its recount in one snapshot: {different}"))
                    conn.commit()
                    tally["reads"] += 1
                    tally["reads with pending"] += int(pending > 0)
                except (errors.SerializationFailure, errors.DeadlockDetected):
                    # a read applies what is pending, so it takes the view's lock like a writer: a
                    # transaction over two views can deadlock with one writing both in the other order
                    conn.rollback()
                    tally["reader retries"] += 1
                time.sleep(0.01)
    except BaseException as err:  # noqa: BLE001
        failures.append(err)


@pytest.mark.parametrize("with_worker", [False, True], ids=["writers act", "worker"])
def test_writers_readers_and_the_worker_never_apply_twice_or_miss(conn: psycopg.Connection, dsn: str,
                                                                  with_worker: bool) -> None:
    conn.execute("CREATE TABLE r (g int, b int, x int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, z int); "
                 "CREATE TABLE e (src int, dst int)")
    conn.execute("INSERT INTO r SELECT i % 4, i % 6, i % 3 FROM generate_series(1, 30) i; "
                 "INSERT INTO s SELECT i % 6, (i * 5) % 6 FROM generate_series(1, 20) i; "
                 "INSERT INTO t SELECT i % 6, i % 5 FROM generate_series(1, 20) i; "
                 "INSERT INTO e SELECT i % 8, (i * 3) % 8 FROM generate_series(1, 30) i")
    command.create("g", GROUPED, system="fivm", refresh="deferred", budget=3, target=dsn)
    command.create("c", TRIANGLE, system="ivme", refresh="deferred", budget=3, target=dsn)
    # first-order joins each change with the live base tables less what is pending: actions the
    # worker takes while writers commit must read both in one snapshot
    command.create("f", GROUPED, system="first-order", refresh="deferred", budget=3, target=dsn)
    worker = None
    if with_worker:
        worker = subprocess.Popen([sys.executable, "-m", "pgivm.cli", "worker", "--dsn", dsn, "--poll", "0.2", "--quiet"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(200):
            if deferred.worker_pid(conn):
                break
            time.sleep(0.05)
    stop = threading.Event()
    tally: dict[str, int] = {k: 0 for k in ("commits", "rollbacks", "retries", "reads", "reads with pending", "reader retries")}
    failures: list[BaseException] = []
    threads = [threading.Thread(target=_writer, args=(dsn, seed, stop, tally, failures)) for seed in range(3)]
    threads.append(threading.Thread(target=_reader, args=(dsn, 99, stop, tally, failures)))
    for thread in threads:
        thread.start()
    time.sleep(12)
    stop.set()
    for thread in threads:
        thread.join(timeout=120)
    if worker is not None:
        worker.send_signal(signal.SIGTERM)
        _, err = worker.communicate(timeout=60)
        assert worker.returncode == 0, err
    assert not failures, failures[:3]
    assert tally["commits"] > 20 and tally["rollbacks"] > 0 and tally["reads"] > 5 and tally["reads with pending"] > 0, tally
    for name, query in VIEWS:
        report = command.verify(name, target=dsn)
        assert report.ok, (name, [str(f) for f in report.failures])
        assert _differences(conn, name, query) == []
    actions_in_writers = conn.execute("SELECT in_writer FROM pgivm_g.deferred").fetchone()[0]  # type: ignore[index]
    if with_worker:
        assert actions_in_writers == 0
    print(tally)


RST_TRIANGLE = "SELECT count(*) FROM r JOIN s ON r.b = s.b JOIN t ON s.c = t.c AND t.a = r.a"


def _rst_view(conn: psycopg.Connection, dsn: str) -> None:
    conn.execute("CREATE TABLE r (a int, b int); CREATE TABLE s (b int, c int); CREATE TABLE t (c int, a int)")
    for table in ("r", "s", "t"):
        conn.execute(f"INSERT INTO {table} SELECT i % 5, (i * 3) % 5 FROM generate_series(1, 40) i")
    command.create("v", RST_TRIANGLE, system="ivme", refresh="deferred", budget=1e6, planner="naive", target=dsn)


class _OtherSession:
    """A second session in a thread: once ``go`` is set it runs ``body`` under a 20 s lock_timeout
    and commits; ``finish`` joins it and fails with what it raised (a deadlock, a timeout)."""

    def __init__(self, dsn: str, body: Callable[[psycopg.Connection], None]) -> None:
        self.go = threading.Event()
        self.failures: list[BaseException] = []

        def run() -> None:
            try:
                self.go.wait(10)
                with psycopg.connect(dsn) as other:
                    other.execute("SET lock_timeout = '20s'")
                    body(other)
                    other.commit()
            except BaseException as err:  # noqa: BLE001  # reported by finish
                self.failures.append(err)

        self.thread = threading.Thread(target=run)
        self.thread.start()

    def finish(self) -> None:
        self.thread.join(timeout=60)
        assert not self.thread.is_alive() and not self.failures, self.failures


def _act_as_the_worker(session: psycopg.Connection) -> None:
    """What the worker does: the view's lock alone, then an action (NAIVE: every log)."""
    session.execute("SELECT FROM pgivm_v.state WHERE singleton FOR NO KEY UPDATE")
    session.execute("SELECT pgivm_v.deferred_act(false)")


def test_writers_do_not_wait_for_the_worker_and_a_read_waits_for_it(conn: psycopg.Connection, dsn: str) -> None:
    """One session acts as the worker does and keeps the view's lock in an open transaction. A
    writer's statements go through at once, even while the holder acts again (it takes only what
    was committed and counts it on its own side); a read by the writer waits for the holder, then
    answers exactly, its own changes included. Every wait is bounded by lock_timeout, so a writer
    that waited would fail the test."""
    _rst_view(conn, dsn)
    conn.execute("INSERT INTO r VALUES (0, 1)")  # something for the first action
    with psycopg.connect(dsn) as holder, psycopg.connect(dsn) as writer:
        _act_as_the_worker(holder)  # keeps the view's lock to commit
        writer.execute("SET lock_timeout = '2s'")
        for table in ("r", "s", "t"):
            writer.execute(f"INSERT INTO {table} VALUES (1, 2), (2, 3)")
        writer.commit()  # committed while the holder still holds the lock
        writer.execute("INSERT INTO r VALUES (3, 4)")  # in flight from here on
        _act_as_the_worker(holder)  # applies the committed rows, not the in-flight one
        writer.execute("DELETE FROM s WHERE b = 3")
        released = threading.Timer(0.5, holder.commit)
        released.start()
        writer.execute("SET lock_timeout = '20s'")
        read = writer.execute("SELECT * FROM v").fetchall()  # waits for the holder, then applies
        assert read == writer.execute(RST_TRIANGLE).fetchall()
        released.join()
        writer.commit()
    assert command.verify("v", target=dsn).ok
    assert _differences(conn, "v", RST_TRIANGLE) == []


def test_writers_crossing_tables_queue_instead_of_deadlocking(conn: psycopg.Connection, dsn: str) -> None:
    """Two transactions write r then s, and s then r: with per-table counts and no order among
    writers they would deadlock; the writers' lock makes the second wait for the first."""
    _rst_view(conn, dsn)

    def second(other: psycopg.Connection) -> None:
        other.execute("INSERT INTO s VALUES (7, 7)")  # waits for the first writer's commit
        other.execute("INSERT INTO r VALUES (7, 7)")

    session = _OtherSession(dsn, second)
    with psycopg.connect(dsn) as one:
        one.execute("INSERT INTO r VALUES (6, 6)")
        session.go.set()
        time.sleep(0.3)  # the second writer is waiting now
        one.execute("INSERT INTO s VALUES (6, 6)")
        one.commit()
    session.finish()
    assert conn.execute("SELECT count(*) FROM r WHERE a IN (6, 7)").fetchone() == (2,)
    assert command.verify("v", target=dsn).ok
    assert _differences(conn, "v", RST_TRIANGLE) == []


def test_a_session_that_reads_then_writes_and_one_that_writes_then_reads(conn: psycopg.Connection, dsn: str) -> None:
    """A read takes the writers' lock before the view's, as writers do, so a session that reads
    and then writes and one that writes and then reads queue instead of deadlocking."""
    _rst_view(conn, dsn)
    conn.execute("INSERT INTO s VALUES (1, 1)")  # pending: the first read applies it

    def writes_then_reads(other: psycopg.Connection) -> None:
        other.execute("INSERT INTO t VALUES (1, 1)")
        assert other.execute("SELECT * FROM v").fetchall() == other.execute(RST_TRIANGLE).fetchall()

    session = _OtherSession(dsn, writes_then_reads)
    with psycopg.connect(dsn) as one:
        one.execute("SET lock_timeout = '20s'")
        one.execute("SELECT * FROM v").fetchall()
        session.go.set()
        time.sleep(0.3)
        one.execute("INSERT INTO r VALUES (1, 1)")
        one.commit()
    session.finish()
    assert command.verify("v", target=dsn).ok
    assert _differences(conn, "v", RST_TRIANGLE) == []


def test_a_stale_truncate_gets_40001_instead_of_leaving_rows_pending(conn: psycopg.Connection, dsn: str) -> None:
    """A REPEATABLE READ TRUNCATE whose snapshot misses a row another writer logged since would
    leave that row pending for a table that is empty; it fails with 40001 instead."""
    _rst_view(conn, dsn)
    with psycopg.connect(dsn) as stale:
        stale.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        stale.execute("SELECT count(*) FROM r").fetchone()  # the snapshot
        conn.execute("INSERT INTO r VALUES (4, 4)")  # another writer, committed after it
        with pytest.raises(errors.SerializationFailure):
            stale.execute("TRUNCATE r")
        stale.rollback()
    conn.execute("TRUNCATE r")  # a fresh one empties the table and what is pending of it
    assert conn.execute("SELECT pending FROM pgivm_v.deferred_table ORDER BY number").fetchall()[0] == (0,)
    assert command.verify("v", target=dsn).ok
    assert _differences(conn, "v", RST_TRIANGLE) == []


def test_the_worker_does_not_wait_for_a_session_holding_the_views_lock(conn: psycopg.Connection, dsn: str) -> None:
    """The worker serves every deferred view in turn: a session that keeps one view's lock (a read
    that applied, to its commit) must not stall it, so deferred_work returns at once (under
    lock_timeout); once the lock is free it acts."""
    _rst_view(conn, dsn)
    conn.execute("INSERT INTO r VALUES (0, 1)")
    with psycopg.connect(dsn) as holder, psycopg.connect(dsn) as worker:
        holder.execute("SELECT * FROM v").fetchall()  # applies, and keeps the locks to commit
        worker.execute("SET lock_timeout = '2s'")
        assert worker.execute("SELECT pgivm_v.deferred_work()").fetchone() == ([],)
        worker.commit()
        holder.commit()
    conn.execute("INSERT INTO s VALUES (1, 1)")
    conn.execute("UPDATE pgivm_v.deferred SET budget_ms = 0")  # what is pending now passes C
    assert conn.execute("SELECT pgivm_v.deferred_work()").fetchone() == ([2],)  # free again: it acts
    assert command.verify("v", target=dsn).ok


def test_an_action_then_a_write_and_a_write_then_a_read_queue_instead_of_deadlocking(conn: psycopg.Connection,
                                                                                       dsn: str) -> None:
    """``pgivm rebalance`` (an action that locks the view) inside a transaction that goes on to
    write takes the writers' lock first, as reads do: a session that writes and then reads waits
    for it instead of closing a cycle."""
    _rst_view(conn, dsn)

    def writes_then_reads(other: psycopg.Connection) -> None:
        other.execute("INSERT INTO t VALUES (2, 2)")  # waits for the action's transaction
        assert other.execute("SELECT * FROM v").fetchall() == other.execute(RST_TRIANGLE).fetchall()

    session = _OtherSession(dsn, writes_then_reads)
    with psycopg.connect(dsn) as one:
        one.execute("SET lock_timeout = '20s'")
        with one.transaction():
            command.action("v", "rebalance", target=one)
            session.go.set()
            time.sleep(0.3)  # the other session is waiting now
            one.execute("INSERT INTO r VALUES (2, 2)")
    session.finish()
    assert command.verify("v", target=dsn).ok
    assert _differences(conn, "v", RST_TRIANGLE) == []

"""Concurrent writers on a real PostgreSQL server: one thread per session, each with its own
psycopg connection, no mocks.

Every maintaining transaction first updates the view's state row, which serializes the writers of
one view. Under READ COMMITTED a later writer waits for the row lock and then computes its delta
against the committed state (no lost triangles); under REPEATABLE READ and SERIALIZABLE a writer
whose snapshot predates another committed writer fails with SQLSTATE 40001 instead of computing a
delta against a stale state.

Every wait is bounded: each session runs with ``lock_timeout`` and every thread join has a
timeout, so a deadlock or a lost wake-up fails the test instead of hanging it.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import psycopg
import pytest
from psycopg import errors

from pgivm import command
from conftest import EDGE_SQL, TRIANGLE_SQL

LOCK_TIMEOUT = "20s"
JOIN_TIMEOUT = 60.0
BLOCK_PROOF_SECONDS = 0.5

RC = psycopg.IsolationLevel.READ_COMMITTED
RR = psycopg.IsolationLevel.REPEATABLE_READ
SER = psycopg.IsolationLevel.SERIALIZABLE


@contextmanager
def session(dsn: str, isolation: psycopg.IsolationLevel = RC, autocommit: bool = False) -> Iterator[psycopg.Connection]:
    """A connection of its own, with a bounded lock wait and the given isolation level."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
        conn.isolation_level = isolation
        conn.autocommit = autocommit
        yield conn


def view_value(conn: psycopg.Connection, name: str = "tri") -> int:
    row = conn.execute(f"SELECT * FROM {name}").fetchone()
    assert row is not None
    return row[0]


def assert_exact(dsn: str, view_sql: str, name: str = "tri", expected: int | None = None) -> int:
    """Maintained value == plain recount (== expected), and verify() finds every invariant intact."""
    with session(dsn, autocommit=True) as conn:
        maintained = view_value(conn, name)
        recount = conn.execute(view_sql).fetchone()[0]
        assert maintained == recount, f"maintained {maintained} != recount {recount}"
        if expected is not None:
            assert recount == expected, f"recount {recount} != expected {expected}"
        report = command.verify(name, target=conn)
        assert report.maintained == report.recount == recount, (report.maintained, report.recount, recount)
        assert not report.failures, [str(f) for f in report.failures]
        assert report.ok
        return recount


def backend_pid(conn: psycopg.Connection) -> int:
    return conn.info.backend_pid


def blocking_pids(observer: psycopg.Connection, pid: int) -> list[int]:
    return list(observer.execute("SELECT pg_blocking_pids(%s)", [pid]).fetchone()[0])


def wait_until_blocked(observer: psycopg.Connection, pid: int, by: int, timeout: float = 10.0) -> None:
    """Wait until backend ``pid`` waits on a lock held by backend ``by``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if by in blocking_pids(observer, pid):
            return
        time.sleep(0.01)
    raise AssertionError(f"backend {pid} never waited on a lock held by {by}")


class Runner(threading.Thread):
    """Runs ``body`` in a thread; the exception it raised, if any, is kept for the test to inspect."""

    def __init__(self, body, name: str) -> None:  # type: ignore[no-untyped-def]
        super().__init__(name=name, daemon=True)
        self.body = body
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.body()
        except BaseException as exc:  # noqa: BLE001  # reported by finish()
            self.error = exc

    def finish(self, timeout: float = JOIN_TIMEOUT) -> BaseException | None:
        self.join(timeout)
        assert not self.is_alive(), f"thread {self.name} still running after {timeout}s (deadlock?)"
        return self.error


# --- 1. many sessions on shared triangles ---------------------------------------------------------

VERTICES = 8  # vertices 0..7: nearly every new edge closes or opens a triangle with other sessions' rows
SESSIONS = 6
STATEMENTS = 150


@dataclass(frozen=True)
class Form:
    name: str
    view_sql: str
    tables: dict[str, tuple[str, str]]
    initial_rows: int  # per table


RST = Form("rst", TRIANGLE_SQL, {"r": ("a", "b"), "s": ("b", "c"), "t": ("c", "a")}, 12)
EDGE = Form("edge", EDGE_SQL, {"e": ("src", "dst")}, 20)


@dataclass
class Tally:
    """What one session did; committed row changes must equal the view's updates_applied delta."""

    committed_rows: int = 0
    statements: int = 0
    commits: int = 0
    rollbacks: int = 0
    deadlocks: int = 0
    transactions: int = 0  # multi-statement transactions attempted


class Writer:
    """Single-row statements and short transactions of one session over the shared vertex set."""

    def __init__(self, conn: psycopg.Connection, form: Form, rnd: random.Random) -> None:
        self.conn, self.form, self.rnd = conn, form, rnd

    def vertex(self) -> int:
        return self.rnd.randrange(VERTICES)

    def table(self) -> tuple[str, str, str]:
        t = self.rnd.choice(list(self.form.tables))
        return (t, *self.form.tables[t])

    def insert(self) -> int:
        t, a, b = self.table()
        return self.conn.execute(f"INSERT INTO {t} ({a}, {b}) VALUES (%s, %s)", [self.vertex(), self.vertex()]).rowcount

    def delete_random(self) -> int:
        t, _, _ = self.table()
        return self.conn.execute(f"DELETE FROM {t} WHERE ctid = (SELECT ctid FROM {t} ORDER BY random() LIMIT 1)").rowcount

    def delete_value(self) -> int:
        """One row with a given first column: aims at the rows the other sessions are joining with."""
        t, a, _ = self.table()
        return self.conn.execute(
            f"DELETE FROM {t} WHERE ctid = (SELECT ctid FROM {t} WHERE {a} = %s ORDER BY random() LIMIT 1)", [self.vertex()]
        ).rowcount

    def update_join_column(self) -> int:
        """Always a different value (shift by 1..7 mod 8), so the trigger's WHEN clause always fires."""
        t, a, b = self.table()
        column = self.rnd.choice([a, b])
        return self.conn.execute(
            f"UPDATE {t} SET {column} = ({column} + %s) %% {VERTICES} "
            f"WHERE ctid = (SELECT ctid FROM {t} ORDER BY random() LIMIT 1)",
            [self.rnd.randint(1, VERTICES - 1)],
        ).rowcount

    def statement(self) -> int:
        x = self.rnd.random()
        if x < 0.45:
            return self.insert()
        if x < 0.60:
            return self.delete_random()
        if x < 0.75:
            return self.delete_value()
        return self.update_join_column()


def writer_session(dsn: str, form: Form, seed: int, barrier: threading.Barrier, tally: Tally) -> None:
    rnd = random.Random(seed)
    with session(dsn, RC, autocommit=True) as conn:
        writer = Writer(conn, form, rnd)
        barrier.wait(timeout=30)
        while tally.statements < STATEMENTS:
            if rnd.random() < 0.12:
                # BEGIN; 2..4 statements; COMMIT (or ROLLBACK about one time in four).
                size = rnd.randint(2, 4)
                roll_back = rnd.random() < 0.25
                rows = 0
                tally.transactions += 1
                try:
                    with conn.transaction():
                        for _ in range(size):
                            rows += writer.statement()
                            tally.statements += 1
                        if roll_back:
                            raise psycopg.Rollback()
                except errors.DeadlockDetected:
                    # Two transactions that each hold a row lock the other needs, one of them also the
                    # state row: PostgreSQL aborts one of them. A legitimate outcome; nothing committed.
                    tally.deadlocks += 1
                    continue
                if roll_back:
                    tally.rollbacks += 1
                else:
                    tally.commits += 1
                    tally.committed_rows += rows
            else:
                tally.statements += 1
                try:
                    rows = writer.statement()
                except errors.DeadlockDetected:
                    # The other side is a multi-statement transaction holding the state row and
                    # wanting a row this statement locked before its trigger asked for the state row.
                    tally.deadlocks += 1
                    continue
                tally.committed_rows += rows
                tally.commits += 1


@dataclass
class Observations:
    snapshots: int = 0
    mismatches: list[tuple[int, int]] = field(default_factory=list)
    values: set[int] = field(default_factory=set)
    max_lock_waiters: int = 0


def monitor_session(dsn: str, view_sql: str, stop: threading.Event, seen: Observations) -> None:
    """While the writers run: in one REPEATABLE READ snapshot, maintained value == recount; and
    count the sessions waiting on a lock (proof that the writers actually contended)."""
    with session(dsn, RR) as conn:
        while not stop.is_set():
            with conn.transaction():
                conn.execute("SET TRANSACTION READ ONLY")
                maintained = view_value(conn)
                recount = conn.execute(view_sql).fetchone()[0]
            seen.snapshots += 1
            seen.values.add(maintained)
            if maintained != recount:
                seen.mismatches.append((maintained, recount))
            with conn.transaction():
                waiting = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                ).fetchone()[0]
            seen.max_lock_waiters = max(seen.max_lock_waiters, waiting)
            time.sleep(0.005)


def load(conn: psycopg.Connection, form: Form, seed: int) -> None:
    rnd = random.Random(seed)
    for t, (a, b) in form.tables.items():
        conn.execute(f"CREATE TABLE {t} ({a} int, {b} int, note text)")
        with conn.cursor().copy(f"COPY {t} ({a}, {b}) FROM STDIN") as copy:
            for _ in range(form.initial_rows):
                copy.write_row((rnd.randrange(VERTICES), rnd.randrange(VERTICES)))


@pytest.mark.parametrize(
    ("form", "epsilon"),
    [(RST, 0.5), (RST, 0.25), (EDGE, 0.5)],
    ids=["triangle-eps0.5", "triangle-eps0.25", "edge-eps0.5"],
)
def test_many_sessions_on_shared_triangles(dsn: str, conn: psycopg.Connection, form: Form, epsilon: float) -> None:
    load(conn, form, seed=7)
    command.create("tri", form.view_sql, epsilon=epsilon, target=conn)
    before = conn.execute("SELECT updates_applied, major_rebalances, minor_rebalances FROM pgivm_tri.state").fetchone()
    assert view_value(conn) > 0  # shared triangles from the start

    barrier = threading.Barrier(SESSIONS)
    tallies = [Tally() for _ in range(SESSIONS)]
    writers = [
        Runner(lambda i=i: writer_session(dsn, form, 1000 + i, barrier, tallies[i]), name=f"writer-{i}")
        for i in range(SESSIONS)
    ]
    stop = threading.Event()
    seen = Observations()
    monitor = Runner(lambda: monitor_session(dsn, form.view_sql, stop, seen), name="monitor")
    monitor.start()
    for w in writers:
        w.start()
    failures = {w.name: w.finish() for w in writers}
    stop.set()
    monitor_error = monitor.finish()

    assert not {k: v for k, v in failures.items() if v is not None}, failures
    assert monitor_error is None, monitor_error
    assert all(t.statements >= STATEMENTS for t in tallies)
    assert sum(t.rollbacks for t in tallies) > 0  # some transactions rolled back whole
    # Every writing statement takes the view's lock before touching a row (a BEFORE statement
    # trigger), so writers queue on it and can never wait on each other's rows: no deadlocks.
    assert sum(t.deadlocks for t in tallies) == 0, tallies

    # Writers really contended: someone waited on a lock, and the value moved while they did.
    assert seen.max_lock_waiters >= 1, seen
    assert len(seen.values) > 1, seen.values
    # Every committed snapshot a reader saw was exact: base tables and view state commit together.
    assert seen.snapshots > 0
    assert not seen.mismatches, f"reader saw maintained != recount in one snapshot: {seen.mismatches[:5]}"

    final = assert_exact(dsn, form.view_sql)
    assert final > 0

    # Each committed row change was maintained exactly once; rolled-back ones not at all.
    after = conn.execute("SELECT updates_applied, major_rebalances, minor_rebalances FROM pgivm_tri.state").fetchone()
    assert after[0] - before[0] == sum(t.committed_rows for t in tallies), (before, after, tallies)
    # The writers grew |D| past N: a major rebalancing ran inside one of the concurrent writers.
    assert after[1] > before[1], (before, after)


# --- 2. the classic lost update, deterministic ----------------------------------------------------


def triangle_tables(conn: psycopg.Connection, rows: dict[str, list[tuple[int, int]]], epsilon: float = 0.5) -> None:
    for t, (a, b) in RST.tables.items():
        conn.execute(f"CREATE TABLE {t} ({a} int, {b} int, note text)")
        for row in rows.get(t, []):
            conn.execute(f"INSERT INTO {t} ({a}, {b}) VALUES (%s, %s)", list(row))
    # Filler on other vertices, so the state is not trivially empty.
    conn.execute("INSERT INTO r (a, b) SELECT g, g + 1 FROM generate_series(10, 30) g")
    conn.execute("INSERT INTO s (b, c) SELECT g + 1, g + 2 FROM generate_series(10, 30) g")
    conn.execute("INSERT INTO t (c, a) SELECT g + 2, g + 5 FROM generate_series(10, 30) g")
    command.create("tri", TRIANGLE_SQL, epsilon=epsilon, target=conn)


def test_two_writers_completing_the_same_triangle_do_not_lose_it(dsn: str, conn: psycopg.Connection) -> None:
    triangle_tables(conn, {"t": [(3, 1)]})
    assert view_value(conn) == 0

    b_statement_done = threading.Event()
    with session(dsn, RC) as a, session(dsn, RC) as b:
        a.execute("INSERT INTO r (a, b) VALUES (1, 2)")  # A: open transaction, holds the state row

        def b_body() -> None:
            with b.transaction():
                b.execute("INSERT INTO s (b, c) VALUES (2, 3)")
                b_statement_done.set()

        runner = Runner(b_body, name="B")
        runner.start()
        try:
            # B's statement is held up by A: it does not finish while A is open ...
            assert not b_statement_done.wait(BLOCK_PROOF_SECONDS), "B's INSERT finished while A still held the view"
            # ... and it is A's transaction it waits for.
            wait_until_blocked(conn, backend_pid(b), by=backend_pid(a))
            # Neither write is visible yet.
            assert view_value(conn) == 0
        finally:
            a.commit()
        assert runner.finish() is None, runner.error
        assert b_statement_done.is_set()

    assert_exact(dsn, TRIANGLE_SQL, expected=1)


# --- 3. REPEATABLE READ / SERIALIZABLE: a stale snapshot fails instead of miscounting -------------


@pytest.mark.parametrize("isolation", [RR, SER], ids=["repeatable-read", "serializable"])
@pytest.mark.parametrize("timing", ["committed-before-write", "open-at-snapshot", "open-at-write"])
@pytest.mark.parametrize("a_row", ["new", "duplicate"])
def test_stale_snapshot_writer_gets_serialization_failure(
    dsn: str, conn: psycopg.Connection, isolation: psycopg.IsolationLevel, timing: str, a_row: str
) -> None:
    """B's snapshot predates A's committed write to r; B's write to s must fail with 40001.

    committed-before-write: A inserts and commits between B's snapshot and B's write.
    open-at-snapshot: A's insert is in progress when B takes its snapshot, committed before B writes.
    open-at-write: A is still open when B writes; B waits, A commits, B fails.

    a_row=duplicate: r(1, 2) is already there and A adds a second copy, so A changes no distinct
    tuple count: only the view's state row stands between B's stale snapshot and a lost triangle
    (B would add 1 for r(1, 2) x s(2, 3) x t(3, 1) where the truth is 2).
    """
    triangle_tables(conn, {"r": [(1, 2)] if a_row == "duplicate" else [], "t": [(3, 1)]})
    with session(dsn, RC) as a, session(dsn, isolation) as b:
        if timing == "open-at-snapshot":
            a.execute("INSERT INTO r (a, b) VALUES (1, 2)")
        b.execute("SELECT 1")  # B's snapshot
        if timing == "open-at-snapshot":
            a.commit()
        elif timing == "committed-before-write":
            a.execute("INSERT INTO r (a, b) VALUES (1, 2)")
            a.commit()
        else:
            a.execute("INSERT INTO r (a, b) VALUES (1, 2)")

        outcome: dict[str, BaseException | None] = {"error": None}

        def b_write() -> None:
            try:
                b.execute("INSERT INTO s (b, c) VALUES (2, 3)")
            except psycopg.Error as exc:
                outcome["error"] = exc

        runner = Runner(b_write, name="B")
        runner.start()
        if timing == "open-at-write":
            try:
                wait_until_blocked(conn, backend_pid(b), by=backend_pid(a))
            finally:
                a.commit()
        assert runner.finish() is None, runner.error
        error = outcome["error"]
        assert isinstance(error, errors.SerializationFailure), f"expected SQLSTATE 40001, got {error!r}"
        assert error.sqlstate == "40001"
        b.rollback()

        # Nothing of B's attempt survived; A's write is maintained.
        assert_exact(dsn, TRIANGLE_SQL, expected=0)

        # The retry takes a fresh snapshot, sees A's r(1, 2) and closes the triangle(s).
        b.execute("INSERT INTO s (b, c) VALUES (2, 3)")
        b.commit()

    assert_exact(dsn, TRIANGLE_SQL, expected=2 if a_row == "duplicate" else 1)


@pytest.mark.parametrize("isolation", [RR, SER], ids=["repeatable-read", "serializable"])
def test_writer_without_conflict_succeeds(dsn: str, conn: psycopg.Connection, isolation: psycopg.IsolationLevel) -> None:
    """No other writer committed since the snapshot: the whole transaction goes through."""
    triangle_tables(conn, {"r": [(1, 2)], "t": [(3, 1)]})
    with session(dsn, isolation) as b:
        b.execute("SELECT 1")  # snapshot
        conn.execute("SELECT count(*) FROM r")  # a concurrent reader does not conflict
        b.execute("INSERT INTO s (b, c) VALUES (2, 3)")
        b.execute("INSERT INTO s (b, c) VALUES (2, 3)")  # a duplicate: two triangles
        b.execute("UPDATE t SET a = a WHERE c = 3")  # no join column changes: no maintenance
        b.execute("DELETE FROM s WHERE ctid = (SELECT ctid FROM s WHERE b = 2 AND c = 3 LIMIT 1)")
        assert view_value(b) == 1  # B sees its own maintained writes
        b.commit()
    assert_exact(dsn, TRIANGLE_SQL, expected=1)


# --- 4. a rolled-back writer releases the waiting one ---------------------------------------------


@pytest.mark.parametrize("isolation", [RC, RR, SER], ids=["read-committed", "repeatable-read", "serializable"])
def test_rolled_back_writer_lets_waiting_writer_through(
    dsn: str, conn: psycopg.Connection, isolation: psycopg.IsolationLevel
) -> None:
    """A adds duplicates of r(1, 2) and t(3, 1) and waits; B adds s(2, 3) and blocks; A rolls back;
    B commits.

    With r(1, 2) and t(3, 1) present the count is 1; had A's rolled-back duplicates leaked into
    the state it would be 4. A's duplicates change no distinct tuple count, so it is the view's
    state row that B waits for. Under every isolation level B succeeds: A never committed.
    """
    triangle_tables(conn, {"r": [(1, 2)], "t": [(3, 1)]})
    b_statement_done = threading.Event()
    with session(dsn, RC) as a, session(dsn, isolation) as b:
        a.execute("INSERT INTO r (a, b) VALUES (1, 2)")
        a.execute("INSERT INTO t (c, a) VALUES (3, 1)")

        def b_body() -> None:
            b.execute("INSERT INTO s (b, c) VALUES (2, 3)")
            b_statement_done.set()

        runner = Runner(b_body, name="B")
        runner.start()
        try:
            assert not b_statement_done.wait(BLOCK_PROOF_SECONDS), "B's INSERT finished while A still held the view"
            wait_until_blocked(conn, backend_pid(b), by=backend_pid(a))
        finally:
            a.rollback()
        assert runner.finish() is None, runner.error
        assert b_statement_done.is_set()
        b.commit()

    assert_exact(dsn, TRIANGLE_SQL, expected=1)

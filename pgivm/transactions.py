"""How pgivm's commands use the database: one transaction per command, pgivm's own settings
inside it, locks taken so that no writer ever deadlocks with a command, snapshots for reading.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Union

import psycopg
from psycopg import sql

from pgivm.catalog import migrate
from pgivm.connection import connect, hardened
from pgivm.errors import LockDenied, PgivmError

Target = Union[str, psycopg.Connection, None]

@contextmanager
def session(target: Target) -> Iterator[psycopg.Connection]:
    if isinstance(target, psycopg.Connection):
        with hardened(target):  # the caller's own settings come back afterwards
            yield target
    else:
        with connect(target, autocommit=True) as conn:  # every transaction explicit, as with a caller's
            yield conn


# Locks of create, drop, rebalance: each attempt waits at most this long, then the command lets go
# of every lock it holds, backs off and tries again, so that it never waits on a writer while that
# writer waits on it (which PostgreSQL would break by aborting one of the two after deadlock_timeout).
LOCK_ATTEMPT_MS = 100
FIRST_LOCK_MS = 1000  # the first lock of an attempt, taken while holding none: no cycle can form
LOCK_WAIT_S = 60.0  # the default budget of all attempts together
# Most attempts are quick: every lock waits at most QUICK_LOCK_MS, so no writer queues behind us.
# Writers that touch several of the tables in one transaction, in a loop, leave them all free
# only for moments; a queued attempt (waiting on its first table) lets the writers that hold the
# others pile up behind it, and its next lock then waits on them in a cycle until it gives up.
# Every QUEUED_EVERY-th attempt queues, so a table that is never free for a moment (overlapping
# writers of that one table) is still taken in its turn.
QUICK_LOCK_MS = 2
QUEUED_EVERY = 8


def attempt_waits(attempt: int) -> tuple[int, int]:
    """How long attempt number ``attempt`` (from 0) waits for its first lock and for each later one."""
    return (FIRST_LOCK_MS, LOCK_ATTEMPT_MS) if attempt % QUEUED_EVERY == QUEUED_EVERY - 1 else (QUICK_LOCK_MS, QUICK_LOCK_MS)


@contextmanager
def transaction(conn: psycopg.Connection) -> Iterator[None]:
    """``conn.transaction()`` (a savepoint inside a caller's transaction) that, on success, puts back
    the settings pgivm changes inside it: transaction-local settings would outlive the savepoint."""
    with conn.transaction():
        saved = conn.execute("SELECT pg_catalog.current_setting('search_path'), pg_catalog.current_setting('row_security'), "
                             "pg_catalog.current_setting('lock_timeout')").fetchone()
        yield
        conn.execute("SELECT pg_catalog.set_config('search_path', %s, true), pg_catalog.set_config('row_security', %s, true), "
                     "pg_catalog.set_config('lock_timeout', %s, true)", saved)


def fixed_search_path(conn: psycopg.Connection) -> None:
    """For the rest of the transaction: names resolve in pg_catalog only (pgivm's SQL qualifies
    everything else), and a row-level security policy is an error, not code run by this role."""
    conn.execute("SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true), "
                 "pg_catalog.set_config('row_security', 'off', true)")


def with_lock_retries(conn: psycopg.Connection, what: str, take: Callable[[int, int], None], budget: float) -> None:
    """Run ``take(first_ms, later_ms)`` (statements that acquire locks, waiting at most
    ``first_ms`` for the first and ``later_ms`` for each later one) in a savepoint; on a lock
    timeout roll back to the savepoint, releasing what it got, back off (with jitter, so that
    retries do not fall into step with a writer's rhythm) and retry, up to ``budget`` seconds. A
    writer queued behind us waits at most one attempt and never deadlocks."""
    previous = conn.execute("SELECT pg_catalog.current_setting('lock_timeout')").fetchone()[0]  # type: ignore[index]
    deadline = time.monotonic() + budget
    pause = 0.005
    attempt = 0
    try:
        while True:
            first_ms, later_ms = attempt_waits(attempt)
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_catalog.set_config('lock_timeout', %s, true)", [f"{first_ms}ms"])
                    take(first_ms, later_ms)
                return
            except psycopg.errors.LockNotAvailable:
                attempt += 1
                if time.monotonic() + pause > deadline:
                    raise PgivmError(f"could not lock {what} within {budget:g} s: other transactions kept them busy",
                                     "retry when fewer transactions write them, or allow a longer wait (--lock-wait)") from None
                time.sleep(pause * random.uniform(0.5, 1.5))
                pause = min(pause * 2, 0.05)
    finally:
        if conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS:
            conn.execute("SELECT pg_catalog.set_config('lock_timeout', %s, true)", [previous])


def lock_base_tables(conn: psycopg.Connection, oids: list[int], mode: str, budget: float) -> None:
    """Lock the base tables (and their partitions) found by oid. Named from the oid now; LOCK runs
    no code of the table's owner, and a name that no longer leads to that oid is an error.

    A quick attempt asks for all of them in one statement; a queued one goes one by one, starting
    with the table that blocked the last attempt: waiting for it while holding nothing cannot
    close a cycle with a writer."""
    names = [conn.execute("SELECT pg_catalog.format('%%I.%%I', n.nspname, c.relname) FROM pg_catalog.pg_class c "
                          "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = %s", [oid]).fetchone()[0]  # type: ignore[index]
             for oid in oids]
    order = list(range(len(oids)))

    def take(first_ms: int, later_ms: int) -> None:
        if first_ms == QUICK_LOCK_MS:  # all at once, in one statement: no round trip between the locks
            try:
                with conn.transaction():
                    conn.execute(sql.SQL("LOCK TABLE {} IN {} MODE").format(
                        sql.SQL(", ").join(sql.SQL(n) for n in names), sql.SQL(mode)))  # type: ignore[arg-type]
            except psycopg.errors.InsufficientPrivilege:
                pass  # the one by one locks below say which table is not ours to lock
            else:
                return check_names()
        for position, i in enumerate(list(order)):
            # Holding nothing yet, the first wait cannot close a cycle: it may be longer.
            timeout = first_ms if position == 0 else later_ms
            conn.execute("SELECT pg_catalog.set_config('lock_timeout', %s, true)", [f"{timeout}ms"])
            try:
                conn.execute(sql.SQL("LOCK TABLE {} IN {} MODE").format(sql.SQL(names[i]), sql.SQL(mode)))  # type: ignore[arg-type]
            except psycopg.errors.InsufficientPrivilege:
                raise LockDenied(f"{conn.info.user} may not lock table {names[i]} in {mode} mode (that takes its owner, "
                                 "or UPDATE, DELETE or TRUNCATE on it)",
                                 f"run this as the owner of {names[i]} or a superuser") from None
            except psycopg.errors.LockNotAvailable:
                order.remove(i)
                order.insert(0, i)  # next attempt waits for it first, holding nothing
                raise
        check_names()

    def check_names() -> None:
        for oid, name in zip(oids, names):
            found = conn.execute("SELECT pg_catalog.to_regclass(%s)::pg_catalog.oid::int8", [name]).fetchone()
            if not found or found[0] != oid:
                raise PgivmError(f"table {name} changed while pgivm was locking it", "retry the command")

    with_lock_retries(conn, ", ".join(names), take, budget)


def lock_by_creating_triggers(conn: psycopg.Connection, statements: list[sql.Composable], tables: dict[int, str],
                              lock_name: str, budget: float) -> None:
    """Create the capture triggers, retried as ``with_lock_retries`` does: CREATE TRIGGER locks
    its table SHARE ROW EXCLUSIVE, against writers, until the commit, and needs only the TRIGGER
    privilege (a LOCK TABLE in that mode would need UPDATE, DELETE or TRUNCATE). ``tables``: each
    base table's oid and name as resolved; the trigger ``lock_name`` must then be on that oid, so
    a name that led elsewhere meanwhile is an error, not a trigger on another table."""
    def take(first_ms: int, later_ms: int) -> None:
        # One round trip: no time between the locks for a writer to take the next table. Holding
        # nothing yet, the first wait cannot close a cycle: it may be longer.
        conn.execute(sql.SQL("; ").join(
            sql.SQL("SELECT pg_catalog.set_config('lock_timeout', {}, true); {}").format(
                sql.Literal(f"{first_ms if position == 0 else later_ms}ms"), statement)
            for position, statement in enumerate(statements)))
        for oid, name in tables.items():
            found = conn.execute("SELECT EXISTS (SELECT FROM pg_catalog.pg_trigger WHERE tgrelid = %s AND tgname = %s)",
                                 [oid, lock_name]).fetchone()
            if not found or not found[0]:
                raise PgivmError(f"table {name} changed while pgivm was locking it", "retry the command")

    with_lock_retries(conn, ", ".join(tables.values()), take, budget)


@contextmanager
def read_committed(conn: psycopg.Connection) -> Iterator[None]:
    """The block's transaction in READ COMMITTED, whose statements each see every commit before
    them: a build that starts after its tables are locked then reads every row committed before
    the lock. Inside a caller's REPEATABLE READ or SERIALIZABLE transaction, whose snapshot may
    be older than the lock, refuse in one line."""
    if conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS:
        level = conn.execute("SELECT pg_catalog.current_setting('transaction_isolation')").fetchone()[0]  # type: ignore[index]
        if level != "read committed":
            raise PgivmError(f"create cannot run in a {level.upper()} transaction: it builds the view from the rows "
                             "committed when it has locked the tables, which that transaction's snapshot may not see",
                             "run it outside your transaction, or in a READ COMMITTED one")
        yield
        return
    saved = conn.isolation_level
    conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
    try:
        yield
    finally:
        conn.isolation_level = saved


@contextmanager
def snapshot(conn: psycopg.Connection, read_only: bool = False) -> Iterator[None]:
    """A REPEATABLE READ transaction (when the connection is idle; inside a caller's transaction,
    that transaction), with pgivm's fixed search_path. Maintenance happens in the writing
    transactions, so one snapshot sees the base tables and the state consistently: no table lock
    is needed, and no writer waits for us. Not read-only by default: a deferred view's reader may
    first apply what is pending, in the same snapshot, and a role that is not a view's owner
    locks the catalog rows of its state before it uses it (``pgivm.owners``)."""
    migrate.upgrade(conn)
    own = conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    saved = (conn.isolation_level, conn.read_only)
    if own:
        conn.isolation_level, conn.read_only = psycopg.IsolationLevel.REPEATABLE_READ, read_only
    try:
        with transaction(conn):
            fixed_search_path(conn)
            yield
    finally:
        if own:
            conn.isolation_level, conn.read_only = saved

"""``pgivm worker``: takes the actions of every deferred view of a database off the writers.

The paper's action is taken when arrivals make the predicted refresh cost pass C. Without a
worker the writer whose append passed it takes the action, in its own transaction. While a
worker runs, it holds a session-level advisory lock (``WORKER_KEY``); a writer that passes C and
finds the lock held only sends ``NOTIFY pgivm_deferred`` (delivered at its commit) and goes on.
The worker wakes on the notification, or every ``poll`` seconds anyway, and for each deferred view
runs ``deferred_work()`` in a transaction of its own: it takes the view's lock after the writers
in flight, and acts if f(s) > C. An action is one transaction, so a worker killed in the middle of
one loses nothing: the logs it was emptying are still there. SIGINT or SIGTERM stop it between
actions.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import psycopg
from psycopg import sql

from pgivm.deferred import CHANNEL, WORKER_KEY
from pgivm.errors import PgivmError
from pgivm.systems.common import Names


@dataclass
class WorkerSummary:
    actions: int = 0
    wakeups: int = 0  # notifications received
    passes: int = 0  # rounds over the deferred views
    retries: int = 0  # actions rolled back by a deadlock or a serialization failure, taken again
    seconds: float = 0.0


def deferred_views(conn: psycopg.Connection) -> list[str]:
    exists = conn.execute("SELECT to_regclass('pgivm.views') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return []
    return [name for (name,) in conn.execute(
        "SELECT name FROM pgivm.views WHERE params->>'refresh' = 'deferred' ORDER BY name")]


def _take_worker_lock(conn: psycopg.Connection) -> None:
    """The worker's advisory lock, exclusive. Writers that pass C try it shared for an instant to
    learn whether a worker runs, so a failed try is retried unless another worker holds it."""
    for _ in range(100):
        taken = conn.execute("SELECT pg_try_advisory_lock(%s, %s)", list(WORKER_KEY)).fetchone()
        if taken and taken[0]:
            return
        holder = conn.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND mode = 'ExclusiveLock' "
            "AND classid = %s AND objid = %s AND objsubid = 2 "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())", list(WORKER_KEY)).fetchone()
        if holder:
            raise PgivmError(f"another pgivm worker already serves this database (server pid {holder[0]})",
                             "one worker serves every deferred view of a database: stop the other one first")
        time.sleep(0.01)  # a writer held it shared for an instant
    raise PgivmError("could not take the worker's advisory lock: writers kept it busy for a second", "start the worker again")


def serve(dsn: str, *, poll: float = 1.0, stop: threading.Event | None = None,
          report: Callable[[str], None] | None = None) -> WorkerSummary:
    """Serve every deferred view of the database until ``stop`` is set."""
    stop = stop or threading.Event()
    summary = WorkerSummary()
    started = time.perf_counter()
    with psycopg.connect(dsn, autocommit=True) as listener, psycopg.connect(dsn, autocommit=True) as work:
        _take_worker_lock(listener)
        listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
        work.execute("SET application_name = 'pgivm worker'")
        while not stop.is_set():
            summary.passes += 1
            for name in deferred_views(work):
                if stop.is_set():
                    break
                try:
                    with work.transaction():
                        row = work.execute(sql.SQL("SELECT {}()").format(Names.of(name)("deferred_work"))).fetchone()
                except (psycopg.errors.UndefinedFunction, psycopg.errors.InvalidSchemaName):
                    continue  # dropped meanwhile
                except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure,
                        psycopg.errors.LockNotAvailable) as err:
                    # a transaction that writes or reads several deferred views holds their locks in
                    # its own order: the action, rolled back whole, is taken again on the next pass
                    summary.retries += 1
                    if report:
                        report(f"{name}: {type(err).__name__}, retried")
                    continue
                chosen = row[0] if row else []
                if chosen:
                    summary.actions += 1
                    if report:
                        report(f"{name}: emptied the logs of table{'s' if len(chosen) > 1 else ''} "
                               f"{', '.join(map(str, chosen))}")
            for _ in listener.notifies(timeout=poll, stop_after=1):
                summary.wakeups += 1
            # the writers that passed C while this pass acted: one more pass serves them all
            for _ in listener.notifies(timeout=0):
                summary.wakeups += 1
    summary.seconds = time.perf_counter() - started
    return summary

"""``pgivm worker``: takes the actions of every deferred view of a database off the writers.

The paper's action is taken when arrivals make the predicted refresh cost pass C. Without a
worker the writer whose append passed it takes the action, in its own transaction. A worker
registers itself in the catalog (``pgivm_catalog.register_worker``: only superusers, the catalog's
owner and roles it grants that function may, and only while no other registered worker lives); a
writer that passes C and finds a live registered worker only sends ``NOTIFY pgivm_deferred``
(delivered at its commit) and goes on. The worker wakes on the notification, or every ``poll``
seconds anyway, and for each deferred view runs ``deferred_work()`` in a transaction of its own:
it acts if f(s) > C. An action is one transaction, so a worker killed in the middle of one loses
nothing: the logs it was emptying are still there. SIGINT or SIGTERM stop it between actions.

The worker serves views of many owners and calls into each one's state: as for any command of a
role that is not the view's owner, the state is checked and locked first (``pgivm.owners``), the
call runs with the owner's rights (every function of the state is the owner's SECURITY DEFINER
function), and the session is reset after each view (``DISCARD ALL``: settings, prepared
statements, temporary objects the owner's code may have left behind). If the server goes away,
the worker says so and reconnects, backing off up to ``MAX_BACKOFF_S``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import psycopg
from psycopg import sql

from pgivm import owners
from pgivm.catalog import migrate
from pgivm.catalog import views as catalog
from pgivm.connection import connect
from pgivm.deferred import CHANNEL
from pgivm.errors import PgivmError
from pgivm.systems.common import Names

MAX_BACKOFF_S = 30.0


@dataclass
class WorkerSummary:
    actions: int = 0
    wakeups: int = 0  # notifications received
    passes: int = 0  # rounds over the deferred views
    retries: int = 0  # actions rolled back by a deadlock or a serialization failure, taken again
    reconnects: int = 0  # times the server went away and the worker connected again
    seconds: float = 0.0


def deferred_views(conn: psycopg.Connection) -> list[str]:
    """The deferred views, read from a catalog checked as trusted in the same transaction: an
    administrator may drop it while the worker runs, and anyone with CREATE on the database could
    then make one whose tables are views calling their own code."""
    try:
        with conn.transaction():
            if not migrate.catalog_trusted(conn):
                return []
            return [name for (name,) in conn.execute(
                "SELECT name FROM pgivm_catalog.views WHERE params->>'refresh' = 'deferred' ORDER BY name")]
    except (psycopg.errors.UndefinedTable, psycopg.errors.InvalidSchemaName):
        return []  # dropped between the check and the read: the next pass checks whatever is there then


def register(conn: psycopg.Connection) -> None:
    """Claim the worker's role for this connection's backend, or say in one line why not."""
    try:
        with conn.transaction():
            if not migrate.catalog_trusted(conn):
                raise PgivmError("this database has no pgivm catalog", "run `pgivm init` first")
            conn.execute("SELECT pgivm_catalog.register_worker()")
    except psycopg.errors.LockNotAvailable as err:
        raise PgivmError(err.diag.message_primary or "another pgivm worker already serves this database",
                         err.diag.message_hint) from None
    except psycopg.errors.InsufficientPrivilege:
        raise PgivmError(f"role {conn.info.user} may not serve as the pgivm worker",
                         "run it as a superuser or as the role that ran `pgivm init` (which may GRANT EXECUTE ON "
                         "FUNCTION pgivm_catalog.register_worker() to another role)") from None


def _serve_view(work: psycopg.Connection, name: str, summary: WorkerSummary,
                report: Callable[[str], None] | None) -> None:
    try:
        with work.transaction():
            if not migrate.catalog_trusted(work):  # gone since the pass began
                return
            record = catalog.get(work, name)
            owners.pin(work, record)
            row = work.execute(sql.SQL("SELECT {}()").format(Names.of(name)("deferred_work"))).fetchone()
            chosen = row[0] if row else []
            labels = dict(work.execute(sql.SQL("SELECT number, label FROM {}").format(
                Names.of(name)("deferred_action"))).fetchall()) if chosen else {}
    except (psycopg.errors.UndefinedFunction, psycopg.errors.InvalidSchemaName, psycopg.errors.UndefinedTable):
        return  # dropped meanwhile
    except PgivmError as err:
        if report:
            report(f"{name}: skipped: {err}")
        return
    except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure, psycopg.errors.LockNotAvailable) as err:
        # a transaction that writes or reads several deferred views holds their locks in its own
        # order: the action, rolled back whole, is taken again on the next pass
        summary.retries += 1
        if report:
            report(f"{name}: {type(err).__name__}, retried")
        return
    finally:
        if not work.closed and work.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            work.execute("DISCARD ALL")  # whatever session state the owner's code left behind
    if chosen:
        summary.actions += 1
        if report:
            tables = ", ".join(str(labels.get(n, n)) for n in chosen)
            report(f"{name}: emptied the log{'s' if len(chosen) > 1 else ''} of {tables}")


def _serve_connected(dsn: str, poll: float, stop: threading.Event, summary: WorkerSummary,
                     report: Callable[[str], None] | None) -> None:
    with connect(dsn, autocommit=True) as listener, connect(dsn, autocommit=True) as work:
        work.execute("SELECT pg_catalog.set_config('application_name', 'pgivm worker', false)")
        register(work)
        try:
            listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
            while not stop.is_set():
                summary.passes += 1
                for name in deferred_views(work):
                    if stop.is_set():
                        break
                    _serve_view(work, name, summary, report)
                for _ in listener.notifies(timeout=poll, stop_after=1):
                    summary.wakeups += 1
                # the writers that passed C while this pass acted: one more pass serves them all
                for _ in listener.notifies(timeout=0):
                    summary.wakeups += 1
        finally:
            if not work.closed and not work.broken and work.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                with work.transaction():
                    try:
                        trusted = migrate.catalog_trusted(work)
                    except PgivmError:
                        trusted = False  # not ours to call into any more: the registration ends with the session
                    if trusted:
                        work.execute("SELECT pgivm_catalog.unregister_worker()")


def serve(dsn: str, *, poll: float = 1.0, stop: threading.Event | None = None,
          report: Callable[[str], None] | None = None) -> WorkerSummary:
    """Serve every deferred view of the database until ``stop`` is set; reconnect if the server
    goes away (a refusal, such as another live worker, ends it)."""
    stop = stop or threading.Event()
    summary = WorkerSummary()
    started = time.perf_counter()
    backoff = 1.0
    while not stop.is_set():
        connected_at = time.monotonic()
        try:
            _serve_connected(dsn, poll, stop, summary, report)
        except (psycopg.OperationalError, PgivmError) as err:
            if isinstance(err, PgivmError) and "could not connect" not in err.message:
                raise
            if time.monotonic() - connected_at > 10 * MAX_BACKOFF_S:
                backoff = 1.0  # it served for a while: a new outage starts the backoff over
            if report:
                first = (str(err).strip().splitlines() or ["connection lost"])[0]
                report(f"lost the server ({first}); connecting again in {backoff:g} s")
            if stop.wait(backoff):
                break
            backoff = min(backoff * 2, MAX_BACKOFF_S)
            summary.reconnects += 1
            continue
        break
    summary.seconds = time.perf_counter() - started
    return summary
